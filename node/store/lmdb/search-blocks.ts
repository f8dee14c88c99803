/**
 * A block of a term's postings on LMDB (search.ts), packed, newest first: its oldest id, the
 * block's distinct logs, then per posting its message id's 16 bytes and its log's index (2
 * bytes). About 18 bytes a posting where two UUID strings took 74.
 *
 *   16 bytes oldest id | u16 logs | per log: u16 length, UTF-8 | u32 postings | per posting: 16 bytes id, u16 log
 */

export interface Posting {
  messageId: string;
  logId: string;
}

/** A posting to write: its message id also as its 16 bytes and its log's as UTF-8 (made once per message, not per term). */
export interface NewPosting extends Posting {
  idBytes: Buffer;
  logBytes: Buffer;
  /** The id's time (ms). */
  time: number;
}

/** The 16 bytes of a UUID. */
export const uuidBytes = (id: string): Buffer => Buffer.from(id.replaceAll('-', ''), 'hex');

/** Encodes postings (at most 65,535 logs). */
export function encodeBlock(postings: readonly NewPosting[]): Buffer {
  const logs = new Map<string, number>();
  const names: Buffer[] = [];
  for (const p of postings) {
    if (logs.has(p.logId)) continue;
    logs.set(p.logId, names.length);
    names.push(p.logBytes);
  }
  const size = 16 + 2 + names.reduce((n, b) => n + 2 + b.length, 0) + 4 + postings.length * 18;
  const out = Buffer.allocUnsafe(size);
  out.set(postings.at(-1)!.idBytes, 0);
  let at = out.writeUInt16BE(names.length, 16);
  for (const b of names) {
    at = out.writeUInt16BE(b.length, at);
    out.set(b, at);
    at += b.length;
  }
  at = out.writeUInt32BE(postings.length, at);
  for (const p of postings) {
    out.set(p.idBytes, at);
    const log = logs.get(p.logId)!;
    out[at + 16] = log >> 8;
    out[at + 17] = log & 0xff;
    at += 18;
  }
  return out;
}

export function decodeBlock(b: Uint8Array): Posting[] {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const logs: string[] = [];
  let at = 18;
  for (let n = buf.readUInt16BE(16); n > 0; n--) {
    const length = buf.readUInt16BE(at);
    logs.push(buf.toString('utf8', at + 2, at + 2 + length));
    at += 2 + length;
  }
  const out: Posting[] = [];
  for (let n = buf.readUInt32BE(at), p = at + 4; n > 0; n--, p += 18) out.push({ messageId: uuidAt(buf, p), logId: logs[buf.readUInt16BE(p + 16)]! });
  return out;
}

/** The oldest message id of a block, read from its first bytes alone. */
export const oldestOf = (b: Uint8Array): string => uuidAt(Buffer.from(b.buffer, b.byteOffset, b.byteLength), 0);

function uuidAt(buf: Buffer, at: number): string {
  const hex = buf.toString('hex', at, at + 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
