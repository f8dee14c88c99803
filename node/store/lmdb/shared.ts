import type { Database, RootDatabase } from 'lmdb';
import type { OutboxEvent } from '../types.ts';

/** A key's elements; a byte array is written as it is (see LmdbMessages.chatKey). */
export type Key = (string | number | Uint8Array)[];
export type Db = Database<unknown, Key>;
export interface Tables {
  root: RootDatabase;
  db: Db;
}

/** Writes webhook events into the current write transaction (the outbox's, as its node's owner). */
export type EventSink = (events: OutboxEvent[] | undefined) => void;

/** Upper bound of a tuple prefix range: ids and timestamps sort below U+FFFF. */
export const END = '\uffff';

export function* values<T>(db: Db, prefix: Key, reverse = false): Generator<T> {
  const range = reverse ? { start: [...prefix, END], end: prefix, reverse: true } : { start: prefix, end: [...prefix, END] };
  for (const { value } of db.getRange(range)) yield value as T;
}
