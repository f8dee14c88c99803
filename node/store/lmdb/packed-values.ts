import { asBinary } from 'lmdb';

/**
 * The values of a message's index rows, ['s'] and ['r'] → [bucket, id] and ['k'] → id, as the
 * msgpack bytes the table's encoder would write for them, made here and put with `asBinary`.
 *
 * Why: every table's values go through one msgpack `pack` function, which V8 optimises for all of
 * them at once; in a node it wrote these short strings at about 40 ns a character (1.8 µs a value,
 * two or three values a message, in the sends bench). Node's native UTF-8 write does it in a few.
 *
 * Guarantee: the bytes are those msgpackr writes (fixarray; a positive fixint only below 0x40, as
 * 0x40-0x7f can name a record structure there, else uint8/16/32; fixstr or str8/16/32), decoded by
 * the table's own decoder into the same array or string; a test compares them with its encoder's. Only for puts inside a write transaction: lmdb copies the bytes
 * before the put returns there, so nothing keeps the buffer afterwards.
 */

/** [bucket, id] as msgpack; `bucket` a non-negative integer (a UTC day). */
export function packedPlace(bucket: number, id: string): ReturnType<typeof asBinary> {
  if (!Number.isSafeInteger(bucket) || bucket < 0 || bucket > 0xffffffff) throw new RangeError(`not a bucket: ${bucket}`);
  const length = Buffer.byteLength(id);
  const out = Buffer.allocUnsafe(1 + sizeOf(bucket, UINT) + sizeOf(length, STR) + length);
  out[0] = 0x92;
  const at = writeSized(out, writeSized(out, 1, bucket, UINT), length, STR);
  out.write(id, at, 'utf8');
  return asBinary(out);
}

/** A string as msgpack. */
export function packedString(value: string): ReturnType<typeof asBinary> {
  const length = Buffer.byteLength(value);
  const out = Buffer.allocUnsafe(sizeOf(length, STR) + length);
  out.write(value, writeSized(out, 0, length, STR), 'utf8');
  return asBinary(out);
}

/** How msgpack writes a size or an unsigned integer: in its type byte below `inline`, else after one of three type bytes (1, 2 or 4 bytes). */
interface SizedFormat {
  inline: number;
  inlineBase: number;
  types: readonly [number, number, number];
}
/** A positive fixint only below 0x40: msgpackr reads 0x40-0x7f as a record structure where one is defined. */
const UINT: SizedFormat = { inline: 0x40, inlineBase: 0x00, types: [0xcc, 0xcd, 0xce] };
/** fixstr, str8, str16, str32. */
const STR: SizedFormat = { inline: 0x20, inlineBase: 0xa0, types: [0xd9, 0xda, 0xdb] };

const sizeOf = (n: number, f: SizedFormat): number => (n < f.inline ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5);

/** Writes n in format f at `at`; returns where it ends. */
function writeSized(out: Buffer, at: number, n: number, f: SizedFormat): number {
  if (n < f.inline) {
    out[at] = f.inlineBase | n;
    return at + 1;
  }
  if (n < 0x100) {
    out[at] = f.types[0];
    out[at + 1] = n;
    return at + 2;
  }
  if (n < 0x10000) {
    out[at] = f.types[1];
    out.writeUInt16BE(n, at + 1);
    return at + 3;
  }
  out[at] = f.types[2];
  out.writeUInt32BE(n, at + 1);
  return at + 5;
}
