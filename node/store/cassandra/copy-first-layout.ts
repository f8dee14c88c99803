import cassandra from 'cassandra-driver';
import { cql, num, STATEMENT_OPTIONS, type CassandraClient } from '../../../common/cassandra/index.ts';
import { seqOfMessageId } from '../message-id.ts';
import { MessageWrites, readMessage } from './message-rows.ts';

/** Statements in flight while copying: enough to keep Cassandra busy, bounded in memory. */
const IN_FLIGHT = 32;

/**
 * Migration 005: copies every message of the first layout (table `messages`, by day bucket) into
 * `chat_messages` (by seq block), with its id row (old ids do not carry their seq), its
 * idempotency key (kept 24 hours from the copy) and its revision in `message_changes` (old rows
 * record no `crev`, so all their revisions are indexed there), and sets each chat's numbers taken
 * (`seq_taken`, `rev_taken`) to the highest it had: the head of `chat_heads` where it was ahead of
 * its messages. Every write is an upsert of the same values, so running it again is harmless.
 *
 * It reads the whole table (paged): for a large keyspace, run `npm run schema` once before the
 * nodes of this version start, rather than letting the first node do it at start.
 */
export async function copyFirstLayout(client: CassandraClient, ks: string): Promise<void> {
  const db = cql(client);
  const heads = new Map<string, { appId: string; chatId: string; seq: number; rev: number }>();
  const raise = (appId: string, chatId: string, seq: number, rev: number) => {
    const k = `${appId}/${chatId}`;
    const head = heads.get(k) ?? { appId, chatId, seq: 0, rev: 0 };
    heads.set(k, { appId, chatId, seq: Math.max(head.seq, seq), rev: Math.max(head.rev, rev) });
  };
  const pending = new Set<Promise<unknown>>();
  const send = async (write: Promise<unknown>) => {
    pending.add(write);
    void write.finally(() => pending.delete(write));
    if (pending.size >= IN_FLIGHT) await Promise.race(pending);
  };
  const paged = { ...STATEMENT_OPTIONS, fetchSize: 500, autoPage: true };
  for await (const row of client.stream(`SELECT * FROM ${ks}.messages`, [], paged) as unknown as AsyncIterable<cassandra.types.Row>) {
    const { message } = readMessage(row);
    // Before the search index's tables exist (node-021): its messages are not indexed.
    // No search rows: this runs before the index's tables exist (node-021), and old messages are not indexed.
    const writes = new MessageWrites(ks);
    writes.created(message, undefined, seqOfMessageId(message.id) === message.seq);
    for (const batch of writes.batches({ index: true })) await send(db.batch(batch));
    raise(message.appId, message.chatId, message.seq, message.rev ?? 0);
  }
  for await (const row of client.stream(`SELECT app_id, chat_id, seq, rev FROM ${ks}.chat_heads`, [], paged) as unknown as AsyncIterable<cassandra.types.Row>) {
    if (row.get('seq') === null) continue;
    raise(String(row.get('app_id')), String(row.get('chat_id')), num(row, 'seq'), num(row, 'rev'));
  }
  await Promise.all(pending);
  for (const head of heads.values()) {
    const current = (await db.execute(`SELECT seq_taken, rev_taken FROM ${ks}.chat_members WHERE app_id = ? AND chat_id = ? LIMIT 1`, [head.appId, head.chatId])).first();
    const stored = (name: string) => (current && current.get(name) !== null ? num(current, name) : 0);
    if (stored('seq_taken') >= head.seq && stored('rev_taken') >= head.rev) continue;
    await send(db.execute(`UPDATE ${ks}.chat_members SET seq_taken = ?, rev_taken = ? WHERE app_id = ? AND chat_id = ?`, [Math.max(head.seq, stored('seq_taken')), Math.max(head.rev, stored('rev_taken')), head.appId, head.chatId]));
  }
  await Promise.all(pending);
}
