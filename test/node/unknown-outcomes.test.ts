import { randomUUID } from 'node:crypto';
import driver, { type types } from 'cassandra-driver';
import t from 'tap';
import { migrate, type Cql } from '../../common/cassandra/index.ts';
import { OutcomeUnknownError, toClientError } from '../../common/index.ts';
import type { SendResult } from '../../node/chat/actor.ts';
import type { EventSink } from '../../node/chat/events.ts';
import { ActorRegistry } from '../../node/chat/registry.ts';
import { CassandraNodeStore, FencedError, HOLD, nodeMigrations, type Chat } from '../../node/store/index.ts';
import { NOW } from '../helpers/fixed-clock.ts';
import { requireService, testKeyspace } from '../helpers/index.ts';

/**
 * A send whose message write fails after it may have landed (README, "Unknown outcomes"), on a real
 * Cassandra: the write is held back and the store is told it timed out, as when replicas answer too
 * late; the held write then lands after the retry, as a replica that had it answers later. The
 * sender is told OUTCOME_UNKNOWN, and its retry with the same key leaves exactly one message,
 * whether the same node retries or another one took the chat. Without the handling the retry stores
 * a second message and the late write a first: two.
 */
const cassandra = await requireService('cassandra', (line) => t.comment(line));
if (!cassandra) t.plan(0, 'cassandra not running');
else {
  const { client, keyspace } = await testKeyspace(t, cassandra, 'chat_unknown');
  await migrate(client, keyspace, nodeMigrations);
  const sink: EventSink = { chatEvent: () => undefined, threadEvent: () => undefined, userEvent: () => undefined, membershipMoved: () => undefined };
  const quick = { ...HOLD, ttlSeconds: 2, marginMs: 1000, minRemainingMs: 300, renewBelowMs: 500 };

  /**
   * The client, except that once armed, the next batch writing `chat_messages` is held back (run
   * first when `applies`) and answered with a write timeout; `late()` then lets it land.
   */
  const faulty = () => {
    let armed: { applies: boolean } | undefined;
    let held: (() => Promise<unknown>) | undefined;
    const db: Cql = {
      execute: (query, params, options) => client.execute(query, params, options),
      batch: async (statements, options) => {
        const run = () => client.batch(statements, options);
        if (!armed || !statements.some((s) => s.query.includes('.chat_messages '))) return run();
        const { applies } = armed;
        armed = undefined;
        if (applies) await run();
        else held = run;
        throw new driver.errors.ResponseError(0x1100, 'Operation timed out - received only 1 responses.');
      },
    };
    return {
      db,
      arm: (applies: boolean) => void (armed = { applies }),
      late: async () => {
        await held?.();
        held = undefined;
      },
    };
  };

  /** A new chat with one member, and a registry of actors over `store` (a node). */
  const chatWith = async (store: CassandraNodeStore) => {
    const appId = randomUUID();
    const userId = randomUUID();
    const chat: Chat = { appId, id: randomUUID(), kind: 'group', name: 'G', createdBy: userId, createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW };
    await store.chats.create(chat, [{ appId, chatId: chat.id, userId, role: 'owner', joinedAt: NOW, readSeq: 0 }]);
    return { appId, chatId: chat.id, userId };
  };
  const node = (store: CassandraNodeStore) => {
    const registry = new ActorRegistry({ store, events: sink, now: () => new Date(NOW) }, { idleMs: 60_000 });
    t.teardown(() => registry.close());
    return registry;
  };
  const send = async (registry: ActorRegistry, appId: string, chatId: string, userId: string, key: string): Promise<SendResult> => {
    const actor = await registry.get(appId, chatId);
    const result = await actor!.send(userId, { content: `content of ${key}`, clientKey: key });
    if (!('message' in result)) throw new Error(`refused: ${result.code}`);
    return result;
  };
  /** Every stored message of the chat, as (key, seq), oldest first. */
  const stored = async (store: CassandraNodeStore, appId: string, chatId: string) =>
    (await store.messages.afterSeq(appId, chatId, 0, 1000)).map((m) => [m.clientKey, m.seq] as [string | undefined, number]);

  for (const applies of [false, true]) {
    t.test(`the same node retries a send whose write timed out (${applies ? 'applied' : 'not yet applied'}): one message`, async (t) => {
      const { db, arm, late } = faulty();
      const store = CassandraNodeStore.open(db, keyspace, { id: randomUUID() }, quick);
      const registry = node(store);
      const { appId, chatId, userId } = await chatWith(store);
      await send(registry, appId, chatId, userId, 'k0');
      arm(applies);
      const failed = await send(registry, appId, chatId, userId, 'k1').then(() => undefined, (e: unknown) => e);
      t.ok(failed instanceof OutcomeUnknownError, 'the send is not acknowledged, nor reported as failed');
      t.equal(toClientError(failed).code, 'OUTCOME_UNKNOWN', 'the client is told its outcome is unknown');
      const retried = await send(registry, appId, chatId, userId, 'k1');
      t.equal(retried.created, false, 'the retry with the same key returns the message as stored');
      t.equal(retried.message.seq, 2, 'at the seq it was first given');
      await late();
      t.same(await stored(store, appId, chatId), [['k0', 1], ['k1', 2]], 'one message each, also after the first write landed late');
      await store.writers.release(appId, chatId);
    });
  }

  t.test('another node takes the chat and the retry goes there; the first write lands after: one message', async (t) => {
    const { db, arm, late } = faulty();
    const first = CassandraNodeStore.open(db, keyspace, { id: 'first' }, quick);
    const { appId, chatId, userId } = await chatWith(first);
    await send(node(first), appId, chatId, userId, 'k0');
    arm(false);
    const failed = await send(node(first), appId, chatId, userId, 'k1').then(() => undefined, (e: unknown) => e);
    t.ok(failed instanceof OutcomeUnknownError, 'outcome unknown');
    // The first node is gone (it never writes again nor hands the chat back); the client retries
    // on another, which may write the chat once the first one's hold has timed out.
    const next = CassandraNodeStore.open(client, keyspace, { id: 'next' }, quick);
    const registry = node(next);
    const deadline = Date.now() + 8000;
    let retried: SendResult | undefined;
    while (!retried) {
      retried = await send(registry, appId, chatId, userId, 'k1').catch((e: unknown) => {
        if (!(e instanceof FencedError) || Date.now() > deadline) throw e;
        return new Promise<undefined>((resolve) => setTimeout(resolve, 100));
      });
    }
    t.equal(retried.created, true, 'the write never landed where the new writer reads: the message is stored now');
    t.ok(retried.message.seq > 2, `past every number the first node had taken (seq ${retried.message.seq})`);
    await late();
    const rows = await stored(next, appId, chatId);
    t.same(rows, [['k0', 1], ['k1', retried.message.seq]], 'the first write, landing after the new writer took the chat, stays deleted: one message');
    const raw = await client.execute(`SELECT seq FROM ${keyspace}.chat_messages WHERE app_id = ? AND chat_id = ? AND block = 0`, [appId, chatId], { prepare: true, consistency: driver.types.consistencies.all });
    t.same(raw.rows.map((r: types.Row) => Number(r.get('seq'))).sort((a, b) => a - b), [1, retried.message.seq], 'read at ALL: no row at seq 2');
    await next.writers.release(appId, chatId);
  });
}
