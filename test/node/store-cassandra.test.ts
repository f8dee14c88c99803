import { randomUUID } from 'node:crypto';
import driver, { type types } from 'cassandra-driver';
import t from 'tap';
import { v7 as uuidv7 } from 'uuid';
import { migrate } from '../../common/cassandra/index.ts';
import { bucketOf } from '../../node/store/buckets.ts';
import { CassandraNodeStore, FencedError, nodeMigrations, type Chat, type Member, type StoredMessage } from '../../node/store/index.ts';
import { NOW, T0 } from '../helpers/fixed-clock.ts';
import { requireService, testKeyspace } from '../helpers/index.ts';
import { nodeStoreConformance } from './store-conformance.ts';

const cassandra = await requireService('cassandra', (line) => t.comment(line));
if (!cassandra) t.pass('skipped: cassandra not running');
else {
  // A keyspace of this file's own (RF 1), dropped and its client closed when the file ends. DDL is
  // slow, so the schema is created once here and every subtest shares it with fresh ids.
  const { client, keyspace } = await testKeyspace(t, cassandra, 'chat_test');
  const first = await migrate(client, keyspace, nodeMigrations);
  const open = async () => ({ store: CassandraNodeStore.open(client, keyspace), cleanup: async () => undefined });

  t.test('cassandra: migrations apply once, and running them again is a no-op', async (t) => {
    t.same(first, nodeMigrations.map((m) => m.name), 'the first run applied every migration');
    t.same(await migrate(client, keyspace, nodeMigrations), [], 'nothing left to apply');
    const recorded = (await client.execute(`SELECT name FROM ${keyspace}.schema_migrations`)).rows.map((r) => String(r.get('name')));
    t.same(recorded.sort(), nodeMigrations.map((m) => m.name).sort());
    const extra = [`CREATE TABLE IF NOT EXISTS {ks}.migration_probe (id text PRIMARY KEY)`];
    t.equal(await migrate(client, keyspace, 'test-001-probe', extra), true, 'one migration by name and statements');
    t.equal(await migrate(client, keyspace, 'test-001-probe', extra), false, 'and again: a no-op');
  });

  // The suite's records all carry fresh ids, so its subtests share the keyspace safely.
  nodeStoreConformance(t, 'cassandra', open);

  t.test('cassandra: putMember racing markRead never lowers the read mark', async (t) => {
    const { store } = await open();
    const appId = randomUUID();
    const chat: Chat = { appId, id: randomUUID(), kind: 'group', name: 'G', createdBy: randomUUID(), createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW };
    const member: Member = { appId, chatId: chat.id, userId: randomUUID(), role: 'member', joinedAt: NOW, readSeq: 0 };
    await store.chats.create(chat, [member]);
    await Promise.all([
      ...[5, 20, 10].map((seq) => store.chats.markRead(appId, chat.id, member.userId, seq)),
      ...['admin', 'member', 'admin'].map((role) => store.chats.putMember({ ...member, role: role as Member['role'], readSeq: 1 })),
    ]);
    t.equal((await store.chats.member(appId, chat.id, member.userId))?.readSeq, 20);
  });

  t.test('cassandra: a revision index row left by a failed put is not reported', async (t) => {
    const { store } = await open();
    const appId = randomUUID();
    const chatId = randomUUID();
    const id = uuidv7({ msecs: T0 });
    const message: StoredMessage = { appId, chatId, id, seq: 1, senderId: randomUUID(), content: 'm', createdAt: NOW, reactions: [], rev: 2 };
    await store.messages.put([message]);
    // As if a later write had indexed rev 1 for this message (which is now at rev 2).
    await client.execute(`INSERT INTO ${keyspace}.message_revs (app_id, chat_id, rev, bucket, id) VALUES (?, ?, ?, ?, ?)`, [appId, chatId, 1, bucketOf(id), id], { prepare: true });
    t.same((await store.messages.changedSince(appId, chatId, 0, 10)).map((m) => m.rev), [2]);
    await store.messages.put([{ ...message, content: 'v3', rev: 3 }, { ...message, content: 'v4', rev: 4 }]);
    t.same((await store.messages.changedSince(appId, chatId, 0, 10)).map((m) => [m.rev, m.content]), [[4, 'v4']], 'a message given twice in one put is stored as its last version');
  });
  t.test('cassandra: a fenced put whose compare-and-set times out finds out whether it was applied', async (t) => {
    const store = CassandraNodeStore.open(client, keyspace);
    /** The store, except that its first `UPDATE` or `INSERT` of a chat head is handed to `once`. */
    const interceptOnce = (statement: 'UPDATE' | 'INSERT', once: (run: () => Promise<types.ResultSet>) => Promise<types.ResultSet>) => {
      let done = false;
      return CassandraNodeStore.open({
        execute: (query, params, options) => {
          const run = () => client.execute(query, params, options);
          if (done || !query.startsWith(statement) || !query.includes('.chat_heads ')) return run();
          done = true;
          return once(run);
        },
      }, keyspace);
    };
    const timeouts = {
      'the server timed out': () => new driver.errors.ResponseError(0x1100, 'CAS operation timed out'),
      'the driver gave up waiting': () => new driver.errors.OperationTimedOutError('no reply in time', '127.0.0.1:9042'),
    };
    const appId = randomUUID();
    const message = (chatId: string, seq: number, content = `m${seq}`): StoredMessage =>
      ({ appId, chatId, id: uuidv7({ msecs: T0 + seq }), seq, senderId: randomUUID(), content, createdAt: NOW, reactions: [], rev: seq });
    const fence = (seq: number) => ({ from: { seq: seq - 1, rev: seq - 1 }, to: { seq, rev: seq } });
    /** A chat whose head row exists, at (1, 1). */
    const started = async () => {
      const chatId = randomUUID();
      await store.messages.put([message(chatId, 1)], fence(1));
      return chatId;
    };

    for (const [name, timeout] of Object.entries(timeouts)) {
      const fresh = randomUUID();
      const first = message(fresh, 1);
      await interceptOnce('INSERT', async (run) => {
        await run();
        throw timeout();
      }).messages.put([first], fence(1));
      t.equal((await store.messages.get(appId, fresh, first.id))?.seq, 1, `${name} on creating the head, which had applied: the put goes on`);

      const moved = await started();
      await interceptOnce('UPDATE', async (run) => {
        await run();
        throw timeout();
      }).messages.put([message(moved, 2)], fence(2));
      t.same((await store.messages.afterSeq(appId, moved, 0, 10)).map((m) => m.seq), [1, 2], `${name} on moving the head, which had applied: the put goes on`);

      const lost = await started();
      await interceptOnce('UPDATE', async () => Promise.reject(timeout())).messages.put([message(lost, 2)], fence(2));
      t.same((await store.messages.afterSeq(appId, lost, 0, 10)).map((m) => m.seq), [1, 2], `${name}, not applied: it is tried again`);
      t.equal(await store.messages.lastSeq(appId, lost), 2);
    }

    // A rival moves the head from the same place to the same place while ours times out unapplied.
    const chatId = await started();
    const refused = await interceptOnce('UPDATE', async () => {
      await store.messages.put([message(chatId, 2, 'rival')], fence(2));
      throw timeouts['the server timed out']();
    }).messages.put([{ ...message(chatId, 2, 'ours'), id: uuidv7({ msecs: T0 + 100 }) }], fence(2)).then(() => undefined, (e: unknown) => e);
    t.ok(refused instanceof FencedError, "the rival's seq and rev in the head are not taken for its own");
    t.same((await store.messages.afterSeq(appId, chatId, 0, 10)).map((m) => m.content), ['m1', 'rival'], 'and only the rival wrote');
  });

  t.test('cassandra: a direct pair naming a deleted chat is released, and the pair gets a new chat', async (t) => {
    const { store } = await open();
    const appId = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    const direct = (): [Chat, [Member, Member]] => {
      const chat: Chat = { appId, id: randomUUID(), kind: 'direct', createdBy: a, createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW };
      const m = (userId: string): Member => ({ appId, chatId: chat.id, userId, role: 'member', joinedAt: NOW, readSeq: 0 });
      return [chat, [m(a), m(b)]];
    };
    const first = await store.chats.ensureDirect(...direct());
    // As if a delete had stopped after removing the chat row but before releasing the pair.
    await client.execute(`DELETE FROM ${keyspace}.chats WHERE app_id = ? AND id = ?`, [appId, first.chat.id], { prepare: true });
    const again = await store.chats.ensureDirect(...direct());
    t.ok(again.created);
    t.not(again.chat.id, first.chat.id);
    t.same((await store.chats.ensureDirect(...direct())).chat.id, again.chat.id, 'and it is the one found from then on');
  });
}
