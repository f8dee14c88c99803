import type { Database } from 'lmdb';

/** Keys are tuples led by the partition (account, application), mirroring the wide-column layout. */
export type Key = (string | number)[];
export type Db = Database<unknown, Key>;

/** Upper bound of a tuple prefix range: ids are UUIDs or ISO timestamps, all below U+FFFF. */
export const END = '\uffff';

export function* rangeValues<T>(db: Db, prefix: Key): Generator<T> {
  for (const { value } of db.getRange({ start: prefix, end: [...prefix, END] })) yield value as T;
}

/** A copy without the fields that are undefined, so what is read back has exactly the fields recorded. */
export const definedFields = <T extends object>(value: T): T => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
