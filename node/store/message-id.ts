import { randomFillSync } from 'node:crypto';

/**
 * Message ids: UUIDv7 (RFC 9562) whose bits after the timestamp carry the message's seq, so a
 * store partitioned by seq finds a message from its id alone (no id index row per message):
 *
 *   48 bits unix ms | ver 7 | 12 bits: seq bits 31..20 | var 10 | 6 bits: seq 19..14 |
 *   8 bits: seq 13..6 | 6 bits: seq 5..0 | 42 random bits
 *
 * Within a chat the seq makes ids unique, and they sort like seq as long as the clock does not go
 * back (the milliseconds never decrease within a process). Across chats they stay unique by their
 * 42 random bits plus the millisecond, as many as a UUIDv7 with a 31-bit counter keeps. Seqs of
 * 2^32 and beyond are not encodable: such ids have random bits there, like any other UUID, and a
 * store indexes them (seqOfMessageId is only a hint that the store verifies).
 *
 * The random bytes come from a pool refilled 4 KiB at a time (crypto per id took 14% of a send).
 */
const pool = new Uint8Array(4096);
let offset = pool.length;
let lastMs = -Infinity;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** The largest seq an id can carry. */
export const MAX_ENCODED_SEQ = 2 ** 32 - 1;

function randomBytes(n: number): Uint8Array {
  if (offset + n > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  return pool.subarray(offset, (offset += n));
}

/** A new id for the message numbered `seq` (see above), at `now` or later. */
export function newMessageId(seq: number, now = Date.now()): string {
  lastMs = Math.max(lastMs, now);
  const b = new Uint8Array(16);
  const random = randomBytes(6);
  let ms = lastMs;
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  const s = Number.isInteger(seq) && seq >= 0 && seq <= MAX_ENCODED_SEQ ? seq : undefined;
  if (s === undefined) {
    const more = randomBytes(4);
    b[6] = 0x70 | (more[0]! & 0x0f);
    b[7] = more[1]!;
    b[8] = 0x80 | (more[2]! & 0x3f);
    b[9] = more[3]!;
    b[10] = random[0]!;
  } else {
    b[6] = 0x70 | ((s >>> 28) & 0x0f);
    b[7] = (s >>> 20) & 0xff;
    b[8] = 0x80 | ((s >>> 14) & 0x3f);
    b[9] = (s >>> 6) & 0xff;
    b[10] = ((s & 0x3f) << 2) | (random[0]! & 0x03);
  }
  for (let i = 11; i < 16; i++) b[i] = random[i - 10]!;
  let out = '';
  for (let i = 0; i < 16; i++) {
    out += HEX[b[i]!]!;
    if (i === 3 || i === 5 || i === 7 || i === 9) out += '-';
  }
  return out;
}

/**
 * The seq an id made by newMessageId carries; for any other UUID a number that means nothing, so a
 * store must check that the message found there has this id. Undefined for a string that is not a
 * UUID.
 */
export function seqOfMessageId(id: string): number | undefined {
  if (id.length !== 36) return undefined;
  const hex = id.slice(14, 18) + id.slice(19, 23) + id.slice(24, 26);
  if (!/^[0-9a-fA-F]{10}$/.test(hex)) return undefined;
  const b6 = parseInt(hex.slice(0, 2), 16);
  const b7 = parseInt(hex.slice(2, 4), 16);
  const b8 = parseInt(hex.slice(4, 6), 16);
  const b9 = parseInt(hex.slice(6, 8), 16);
  const b10 = parseInt(hex.slice(8, 10), 16);
  return (b6 & 0x0f) * 2 ** 28 + b7 * 2 ** 20 + (b8 & 0x3f) * 2 ** 14 + b9 * 2 ** 6 + (b10 >>> 2);
}
