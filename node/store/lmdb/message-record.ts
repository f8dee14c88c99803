import type { StoredMessage } from '../types.ts';

/**
 * How a message is kept in LMDB: the JSON text of a positional array, `[RECORD_V1, appId, chatId,
 * …]`, its fields in POSITIONS order, absent ones null and those at the end cut off.
 *
 * Why positions: the store's msgpack encoder has no shared structures (they would be a row of the
 * table that a write could change and an aborted transaction roll back under writes already using
 * it), so an object is written with its field names each time; a record carries only the values.
 *
 * Why JSON text: every table's values go through one msgpack `pack` function, and V8 optimises it
 * for all of them at once. In the node, with the other tables' shapes in its type feedback, it
 * wrote the record's short strings at about 40 ns a character: 8.4 µs a message in the sends
 * bench, the largest part of the message transaction. `JSON.stringify` is native and the same
 * whatever else the process encodes, and msgpack writes the long string it makes natively too:
 * 1.8 µs, measured in the same run. JSON carries every field exactly: strings (lone surrogates
 * too), integers, and `data`, which came from JSON.
 *
 * Compatibility: records kept as msgpack arrays (absent fields undefined) and messages kept as
 * objects, both written by earlier versions, are read as they are; a string is only ever a record.
 * A position is never reused or moved: a new field takes the next one, and POSITIONS must name
 * every field of StoredMessage, or this does not compile.
 */
const RECORD_V1 = 1;

const POSITIONS = {
  appId: 1,
  chatId: 2,
  id: 3,
  seq: 4,
  senderId: 5,
  content: 6,
  createdAt: 7,
  reactions: 8,
  rev: 9,
  clientKey: 10,
  editedAt: 11,
  deletedAt: 12,
  replyToId: 13,
  hiddenAt: 14,
  attachments: 15,
  parentId: 16,
  copySeq: 17,
  thread: 18,
  mentions: 19,
  type: 20,
  data: 21,
} as const satisfies { readonly [K in keyof StoredMessage]-?: number };

/** The fields every message has: positions 1 to 8. */
const REQUIRED = 8;
/** Each optional field, at its position. */
const OPTIONAL: (keyof StoredMessage)[] = [];
for (const [field, at] of Object.entries(POSITIONS)) if (at > REQUIRED) OPTIONAL[at] = field as keyof StoredMessage;

/** A message as its record. */
export function messageRecord(m: StoredMessage): string {
  const record: unknown[] = [RECORD_V1, m.appId, m.chatId, m.id, m.seq, m.senderId, m.content, m.createdAt, m.reactions];
  for (let at = REQUIRED + 1; at < OPTIONAL.length; at++) {
    const value = m[OPTIONAL[at]!];
    if (value === undefined) continue;
    while (record.length < at) record.push(null);
    record.push(value);
  }
  return JSON.stringify(record);
}

/** A stored value read back as its message: a record (JSON text, or an array), or an object written before records. */
export function storedMessage(value: unknown): StoredMessage {
  if (typeof value === 'string') return fromRecord(JSON.parse(value) as unknown[]);
  if (!Array.isArray(value)) return value as StoredMessage;
  return fromRecord(value);
}

/** A record's values as the message; an absent field is null (JSON text) or undefined (an array). */
function fromRecord(value: unknown[]): StoredMessage {
  if (value[0] !== RECORD_V1) throw new Error(`a message record of unknown format ${String(value[0])}: written by a newer version`);
  const m = { appId: value[1], chatId: value[2], id: value[3], seq: value[4], senderId: value[5], content: value[6], createdAt: value[7], reactions: value[8] } as StoredMessage;
  const fields = m as unknown as Record<string, unknown>;
  for (let at = REQUIRED + 1; at < value.length; at++) if (value[at] != null) fields[OPTIONAL[at]!] = value[at];
  return m;
}

/** storedMessage of a value that may be absent. */
export function storedMessageOrNone(value: unknown): StoredMessage | undefined {
  return value === undefined ? undefined : storedMessage(value);
}
