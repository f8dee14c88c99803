import { num, opt, str, type BatchStatement, type Cql } from '../../../common/cassandra/index.ts';
import { BLOCK, blockOf } from './message-rows.ts';

/**
 * Message writes whose outcome is unknown, and how a writer makes them definite.
 *
 * With several replicas a write can fail after some of them applied it: a `WriteTimeout` (fewer
 * than a quorum answered in time), an `Unavailable` on one of a put's batches after another
 * applied, a coordinator lost mid-request. Such a write may be stored, now or later (a replica
 * that has it answers a later read, and read repair copies it). Its sender is told
 * `OUTCOME_UNKNOWN`, never that it failed, and must be able to retry with its idempotency key and
 * get the message if it landed, or a single new one if it did not. Two rules make that hold:
 *
 * 1. A writer that still holds the chat writes an in-doubt put again, whole, with the timestamp
 *    of its first attempt (`InDoubtPut`), before it writes or looks up a key in that chat again
 *    (CassandraLeases.writable). Same rows, same timestamp: the second write changes nothing the
 *    first applied and completes what it did not, so the message is then stored at a quorum and a
 *    key lookup finds it. A later write of the same rows (an edit) has a later timestamp and wins.
 * 2. A writer that takes a chat (a claim: the previous holder crashed, was cut off, or gave the
 *    chat back with writes in doubt) settles its tail (`settleTail`) before anything else. The
 *    previous holder's in-doubt rows are its newest ones (a chat's writes go one batch at a time,
 *    and nothing is written after a batch in doubt until rule 1 completes it), at most `window`
 *    seqs, below the numbers it had taken. The new writer reads the newest row (`H`), then the
 *    `window` rows up to `H`, at LOCAL_QUORUM: Cassandra's blocking read repair leaves every row a
 *    quorum read returns on a quorum of replicas, so those are stored for good, and their
 *    idempotency keys are written again. Every other seq of that window and every seq above `H`
 *    up to the numbers taken is deleted, with a timestamp `TOMBSTONE_LEAD_MS` ahead of the
 *    clock: a row of the old writer that lands later (a replica that had it, a hint, a repair)
 *    carries an older timestamp and stays deleted. So each in-doubt message ends up stored for
 *    good or gone for good before the new writer looks up a key, and no number is used twice
 *    (the new writer numbers past the numbers taken). The deleted seqs were never acknowledged:
 *    an acknowledged row is on a quorum and the read returns it.
 * A clean hand-over (ChatWriters.release after every write settled) lowers the numbers taken to
 * the exact head, which is then the newest row: the settle costs one read and deletes nothing.
 *
 * Edits, deletes and reactions in doubt follow rule 1 while the writer holds the chat; after a
 * claim they may still land later (the change row is rewritten with its own timestamp), as a
 * change the client was told may have happened.
 */

/** A put whose outcome is unknown: its statements and the timestamp every attempt carries. */
export interface InDoubtPut {
  readonly batches: readonly BatchStatement[][];
  /** Rows that need no atomicity with the batches (the search index's), sent apart. */
  readonly index?: readonly BatchStatement[];
  /** Microseconds since the epoch (Cassandra's write timestamp). */
  readonly timestamp: number;
}

/**
 * How far ahead of the clock the tail's tombstones are dated, so clocks that disagree by less than
 * this (NTP keeps them within milliseconds) cannot let an old row outlive its deletion. The seqs
 * deleted are never written again, so dating them ahead hides nothing later.
 */
export const TOMBSTONE_LEAD_MS = 60_000;

let lastMicros = 0;
/** Write timestamps in microseconds, increasing within this process (a later edit must win). */
export function writeTimestamp(): number {
  lastMicros = Math.max(lastMicros + 1, Date.now() * 1000);
  return lastMicros;
}

/** Writes an in-doubt put again, whole, with the timestamp of its first attempt (rule 1). */
export async function writeAgain(db: Cql, put: InDoubtPut): Promise<void> {
  const index = put.index ?? [];
  const batches = [...put.batches];
  for (let i = 0; i < index.length; i += 32) batches.push(index.slice(i, i + 32));
  await Promise.all(batches.map((b) => db.batch(b, { timestamp: put.timestamp, isIdempotent: true })));
}

/** The newest message seq of the chat at or below `upTo`, or 0 (blocks left empty are skipped). */
export async function newestAtOrBelow(db: Cql, ks: string, appId: string, chatId: string, upTo: number): Promise<number> {
  for (let block = blockOf(upTo); block >= 0; block--) {
    const row = (await db.execute(`SELECT seq FROM ${ks}.chat_messages WHERE app_id = ? AND chat_id = ? AND block = ? AND seq <= ? ORDER BY seq DESC LIMIT 1`, [appId, chatId, block, upTo])).first();
    if (row) return num(row, 'seq');
  }
  return 0;
}

/** Deletes the seqs in [from, to] of one chat, block by block, dated `timestamp`. */
function deletions(ks: string, appId: string, chatId: string, from: number, to: number): BatchStatement[] {
  const out: BatchStatement[] = [];
  for (let block = blockOf(from); from <= to && block <= blockOf(to); block++) {
    const lo = Math.max(from, block * BLOCK);
    const hi = Math.min(to, block * BLOCK + BLOCK - 1);
    out.push({ query: `DELETE FROM ${ks}.chat_messages WHERE app_id = ? AND chat_id = ? AND block = ? AND seq >= ? AND seq <= ?`, params: [appId, chatId, block, lo, hi] });
  }
  return out;
}

/**
 * Rule 2: makes every message of the chat's previous writer stored for good or gone for good.
 * `upTo` is the highest seq that writer may have used (the numbers taken when this one claimed);
 * `window` bounds the seqs of one put (a put's new messages are consecutive seqs).
 */
export async function settleTail(db: Cql, ks: string, appId: string, chatId: string, upTo: number, window: number): Promise<void> {
  if (upTo <= 0) return;
  const newest = await newestAtOrBelow(db, ks, appId, chatId, upTo);
  if (newest === upTo) return;
  const from = Math.max(1, newest - window + 1);
  const seen = new Set<number>();
  const keys: BatchStatement[] = [];
  for (let block = blockOf(from); newest > 0 && block <= blockOf(newest); block++) {
    const rows = await db.execute(
      `SELECT * FROM ${ks}.chat_messages WHERE app_id = ? AND chat_id = ? AND block = ? AND seq >= ? AND seq <= ?`,
      [appId, chatId, block, Math.max(from, block * BLOCK), Math.min(newest, block * BLOCK + BLOCK - 1)],
    );
    for (const row of rows.rows) {
      const seq = num(row, 'seq');
      seen.add(seq);
      const key = opt(row, 'client_key');
      if (key !== undefined) {
        keys.push({ query: `INSERT INTO ${ks}.send_keys (app_id, chat_id, sender_id, client_key, seq, id) VALUES (?, ?, ?, ?, ?, ?)`, params: [appId, chatId, str(row, 'sender_id'), key, seq, str(row, 'id')] });
      }
    }
  }
  // The seqs of the window that the quorum read did not return, in runs, and everything above.
  const deletes: BatchStatement[] = [];
  for (let seq = from; seq <= newest; seq++) {
    if (seen.has(seq)) continue;
    let end = seq;
    while (end + 1 <= newest && !seen.has(end + 1)) end++;
    deletes.push(...deletions(ks, appId, chatId, seq, end));
    seq = end;
  }
  deletes.push(...deletions(ks, appId, chatId, newest + 1, upTo));
  const timestamp = (Date.now() + TOMBSTONE_LEAD_MS) * 1000;
  await Promise.all([
    ...deletes.map((d) => db.execute(d.query, d.params, { timestamp, isIdempotent: true })),
    ...keys.map((k) => db.execute(k.query, k.params, { isIdempotent: true })),
  ]);
}
