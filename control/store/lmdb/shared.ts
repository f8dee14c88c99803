import type { Database } from 'lmdb';

/** Keys are tuples led by the partition (account, application), mirroring the wide-column layout. */
export type Key = (string | number)[];
export type Db = Database<unknown, Key>;

/** Upper bound of a tuple prefix range: ids are UUIDs or ISO timestamps, all below U+FFFF. */
export const END = '\uffff';

export function* rangeValues<T>(db: Db, prefix: Key): Generator<T> {
  for (const { value } of db.getRange({ start: prefix, end: [...prefix, END] })) yield value as T;
}
