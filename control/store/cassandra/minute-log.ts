import cassandra from 'cassandra-driver';

/**
 * What the delivery logs on Cassandra share (webhook-deliveries.ts, push-deliveries.ts): attempts
 * in partitions of one minute each, newest first, beside a partition listing the minutes that hold
 * attempts, newest first; every row expires.
 */

/** The bucket of an attempt: its minute, `YYYY-MM-DDTHH:MM` (a prefix of `at`, so buckets sort as their attempts do). */
export const minuteOf = (at: string) => at.slice(0, 16);
/** A value left out of an insert: no cell is written (a null would write a tombstone). */
export const absent = <T>(value: T | undefined): T | typeof cassandra.types.unset => (value === undefined ? cassandra.types.unset : value);
/** Attempts written at once: a large record call goes out in rounds of this many. */
export const WRITE_ROUND = 64;
/** Minute buckets read at once while listing. */
const READ_ROUND = 8;

/**
 * The newest `limit` attempts of the `minutes` (newest first, each holding an attempt), by reading
 * `read(minute, want)` (a minute's newest `want`) a round of minutes at a time until there are
 * `limit`: usually one round, at most one read per minute given.
 */
export async function newestOfMinutes<T>(minutes: string[], limit: number, read: (minute: string, want: number) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < minutes.length && out.length < limit; i += READ_ROUND) {
    const want = limit - out.length;
    const pages = await Promise.all(minutes.slice(i, i + READ_ROUND).map((minute) => read(minute, want)));
    for (const page of pages) for (const item of page) if (out.length < limit) out.push(item);
  }
  return out;
}
