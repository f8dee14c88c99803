import { newestFirst } from '../search-postings.ts';

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

/** A term's postings (oldest first) cut into blocks of at most `spanMs` between oldest and newest, each newest first. */
export function* spans(postings: readonly NewPosting[], spanMs: number): Iterable<NewPosting[]> {
  let from = 0;
  for (let i = 1; i <= postings.length; i++) {
    if (i < postings.length && postings[i]!.time - postings[from]!.time <= spanMs) continue;
    yield postings.slice(from, i).reverse();
    from = i;
  }
}

/** Encodes postings, newest first (at most 65,535 logs). */
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

function uuidAt(buf: Buffer, at: number): string {
  const hex = buf.toString('hex', at, at + 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The newest `limit` distinct postings with ids strictly between `after` and `before` (either
 * open), from postings held in memory (`add`) and blocks read newest-first by their newest id
 * (`addBlock`, until `enough`). A block's postings are in id order, so it is cut by a binary
 * search on the packed ids, and only the postings kept become strings: a common term's block
 * holds thousands, of which a page needs a few hundred at most.
 */
export class NewestPostings {
  private list: Posting[] = [];
  /** Whether postings were added since the list was last sorted. */
  private added = false;
  /** The limit-th newest id once `limit` are held (and its bytes): no older posting is kept. */
  private floor: string | undefined;
  private floorBytes: Buffer | undefined;
  private readonly beforeBytes: Buffer | undefined;
  private readonly afterBytes: Buffer | undefined;

  constructor(
    private readonly limit: number,
    before: string | undefined,
    after: string | undefined,
  ) {
    this.beforeBytes = before === undefined ? undefined : uuidBytes(before);
    this.afterBytes = after === undefined ? undefined : uuidBytes(after);
  }

  /** Postings in range (as memory's are): kept among the newest. */
  add(postings: readonly Posting[]): void {
    for (const p of postings) this.list.push(p);
    this.added ||= postings.length > 0;
    this.trim();
  }

  /** Whether a block whose newest id is `newest` (and every block after it) is older than the newest `limit`. */
  enough(newest: string): boolean {
    return this.floor !== undefined && newest < this.floor;
  }

  addBlock(b: Uint8Array): void {
    const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    const logs: string[] = [];
    let at = 18;
    for (let n = buf.readUInt16BE(16); n > 0; n--) {
      const length = buf.readUInt16BE(at);
      logs.push(buf.toString('utf8', at + 2, at + 2 + length));
      at += 2 + length;
    }
    const count = buf.readUInt32BE(at);
    const first = at + 4;
    // Newest first: the first posting below `before`.
    let [lo, hi] = [0, count];
    if (this.beforeBytes) {
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (below(buf, first + mid * 18, this.beforeBytes)) hi = mid;
        else lo = mid + 1;
      }
    }
    for (let i = lo; i < count; i++) {
      const p = first + i * 18;
      if (this.afterBytes && !above(buf, p, this.afterBytes)) break;
      if (this.floorBytes && below(buf, p, this.floorBytes)) break;
      this.list.push({ messageId: uuidAt(buf, p), logId: logs[buf.readUInt16BE(p + 16)]! });
      this.added = true;
      // Bounded: trimmed to the newest `limit` (raising the floor) at twice that.
      if (this.list.length >= 2 * this.limit) this.trim();
    }
    this.trim();
  }

  /** The newest `limit`, newest first, each once. */
  result(): Posting[] {
    this.trim(true);
    return this.list;
  }

  /** Sorts, drops duplicates and keeps the newest `limit` once there are that many (or when asked). */
  private trim(always = false): void {
    if (!this.added || (!always && this.list.length < this.limit)) return;
    this.added = false;
    this.list.sort(newestFirst);
    const out: Posting[] = [];
    for (const p of this.list) {
      const last = out.at(-1);
      if (last && last.messageId === p.messageId && last.logId === p.logId) continue;
      out.push(p);
      if (out.length === this.limit) break;
    }
    this.list = out;
    if (out.length === this.limit && this.floor !== out.at(-1)!.messageId) {
      this.floor = out.at(-1)!.messageId;
      this.floorBytes = uuidBytes(this.floor);
    }
  }
}


/** Whether the 16 bytes of an id at `at` are below / above `id`'s. */
const below = (buf: Buffer, at: number, id: Buffer) => buf.compare(id, 0, 16, at, at + 16) < 0;
const above = (buf: Buffer, at: number, id: Buffer) => buf.compare(id, 0, 16, at, at + 16) > 0;
