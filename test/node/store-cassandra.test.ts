import { randomUUID } from 'node:crypto';
import driver, { type types } from 'cassandra-driver';
import t from 'tap';
import { v7 as uuidv7 } from 'uuid';
import { migrate } from '../../common/cassandra/index.ts';
import { BackendUnavailableError, OutcomeUnknownError } from '../../common/index.ts';
import { CassandraNodeStore, FencedError, newMessageId, nodeMigrations, type Chat, type Member, type StoredMessage } from '../../node/store/index.ts';
import { NOW, T0 } from '../helpers/fixed-clock.ts';
import { requireService, testKeyspace } from '../helpers/index.ts';
import { nodeStoreConformance } from './store-conformance.ts';

const cassandra = await requireService('cassandra', (line) => t.comment(line));
if (!cassandra) t.skip('cassandra not running', () => undefined);
else {
  // A keyspace of this file's own (RF 1), dropped and its client closed when the file ends. DDL is
  // slow, so the schema is created once here and every subtest shares it with fresh ids.
  const { client, keyspace } = await testKeyspace(t, cassandra, 'chat_test');
  const first = await migrate(client, keyspace, nodeMigrations);
  const open = async () => ({ store: CassandraNodeStore.open(client, keyspace), another: async () => CassandraNodeStore.open(client, keyspace), cleanup: async () => undefined });

  t.test('cassandra: migrations apply once, and running them again is a no-op', async (t) => {
    t.same(first, nodeMigrations.map((m) => m.name), 'the first run applied every migration');
    t.same(await migrate(client, keyspace, nodeMigrations), [], 'nothing left to apply');
    const recorded = (await client.execute(`SELECT name FROM ${keyspace}.schema_migrations`)).rows.map((r) => String(r.get('name')));
    t.same(recorded.sort(), nodeMigrations.map((m) => m.name).sort());
    const extra = [`CREATE TABLE IF NOT EXISTS {ks}.migration_probe (id text PRIMARY KEY)`];
    t.equal(await migrate(client, keyspace, 'test-001-probe', extra), true, 'one migration by name and statements');
    t.equal(await migrate(client, keyspace, 'test-001-probe', extra), false, 'and again: a no-op');
  });

  // The suite's records all carry fresh ids, so its subtests share the keyspace safely. Each
  // instance is a writer of its own, as each node of a cluster is.
  nodeStoreConformance(t, 'cassandra', open);

  t.test('cassandra: putMember racing markRead never lowers the read mark', async (t) => {
    const { store } = await open();
    const appId = randomUUID();
    const chat: Chat = { appId, id: randomUUID(), kind: 'group', name: 'G', createdBy: randomUUID(), createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW };
    const member: Member = { appId, chatId: chat.id, userId: randomUUID(), role: 'member', joinedAt: NOW, readSeq: 0 };
    await store.chats.create(chat, [member]);
    await Promise.all([
      ...[5, 20, 10].map((seq) => store.chats.markRead(appId, chat.id, member.userId, seq)),
      ...['admin', 'member', 'admin'].map((role) => store.chats.putMember({ ...member, role: role as Member['role'], readSeq: 1 }, { fenced: role === 'member' })),
    ]);
    t.equal((await store.chats.member(appId, chat.id, member.userId))?.readSeq, 20);
  });

  t.test("cassandra: a chat that moves up in a user's list while a page is read is listed at its new place, once", async (t) => {
    const { store } = await open();
    const appId = randomUUID();
    const userId = randomUUID();
    const at = (minute: number) => new Date(T0 + minute * 60_000).toISOString();
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const [i, id] of ids.entries()) {
      const chat: Chat = { appId, id, kind: 'group', name: `G${i}`, createdBy: userId, createdAt: at(i), updatedAt: at(i), lastSeq: 0, lastActivityAt: at(i) };
      await store.chats.create(chat, [{ appId, chatId: id, userId, role: 'owner', joinedAt: at(i), readSeq: 0 }]);
    }
    t.same((await store.chats.chatsByActivity(appId, userId, undefined, 10)).map((e) => e.chatId), [ids[2], ids[1], ids[0]], 'newest first');
    // What a page read sees when a move lands between its read of the entries and of the pointers:
    // the old entry, and a pointer already at the new time (the move's new entry is above the read).
    const pointer = `UPDATE ${keyspace}.user_chats SET activity_at = ? WHERE app_id = ? AND user_id = ? AND chat_id = ?`;
    await client.execute(pointer, [at(10), appId, userId, ids[0]], { prepare: true });
    // And a chat whose stale older entry sits beside its current one (a move whose previous time was not the stored one).
    await client.execute(`INSERT INTO ${keyspace}.user_chat_activity (app_id, user_id, activity_at, chat_id) VALUES (?, ?, ?, ?)`, [appId, userId, at(-5), ids[2]], { prepare: true });
    const page = await store.chats.chatsByActivity(appId, userId, undefined, 10);
    t.same(page, [{ at: at(10), chatId: ids[0] }, { at: at(2), chatId: ids[2] }, { at: at(1), chatId: ids[1] }], 'the moved chat at its new place, the other once at its current one');
    t.same(await store.chats.chatsByActivity(appId, userId, { at: at(2), chatId: ids[2]! }, 10), [{ at: at(1), chatId: ids[1] }], 'a page after a cursor leaves out a chat that moved above it');
  });

  t.test("cassandra: a chat whose old entry a page meets in a later round is listed at its new place within the page", async (t) => {
    const { store } = await open();
    const appId = randomUUID();
    const userId = randomUUID();
    const at = (minute: number) => new Date(T0 + minute * 60_000).toISOString();
    const [busy, moved] = [randomUUID(), randomUUID()];
    for (const [id, minute] of [[busy, 5], [moved, 1]] as const) {
      const chat: Chat = { appId, id, kind: 'group', name: id, createdBy: userId, createdAt: at(minute), updatedAt: at(minute), lastSeq: 0, lastActivityAt: at(minute) };
      await store.chats.create(chat, [{ appId, chatId: id, userId, role: 'owner', joinedAt: at(minute), readSeq: 0 }]);
    }
    // A stale entry (no membership behind it) between the two, so a page of 2 reads in two rounds:
    // [busy, stale], then the moved chat's old entry, whose pointer is already at minute 4.
    await client.execute(`INSERT INTO ${keyspace}.user_chat_activity (app_id, user_id, activity_at, chat_id) VALUES (?, ?, ?, ?)`, [appId, userId, at(3), randomUUID()], { prepare: true });
    await client.execute(`UPDATE ${keyspace}.user_chats SET activity_at = ? WHERE app_id = ? AND user_id = ? AND chat_id = ?`, [at(4), appId, userId, moved], { prepare: true });
    t.same(await store.chats.chatsByActivity(appId, userId, undefined, 2), [{ at: at(5), chatId: busy }, { at: at(4), chatId: moved }], 'both chats, the moved one at its new place');
  });

  t.test('cassandra: a change index row left by a failed put is not reported', async (t) => {
    const { store } = await open();
    const appId = randomUUID();
    const chatId = randomUUID();
    const id = uuidv7({ msecs: T0 });
    const message: StoredMessage = { appId, chatId, id, seq: 1, senderId: randomUUID(), content: 'm', createdAt: NOW, reactions: [], rev: 2 };
    await store.messages.put([message]);
    // As if a later write had indexed rev 1 for this message (which is now at rev 2).
    await client.execute(`INSERT INTO ${keyspace}.message_changes (app_id, chat_id, block, rev, seq) VALUES (?, ?, ?, ?, ?)`, [appId, chatId, 0, 1, 1], { prepare: true });
    t.same((await store.messages.changedSince(appId, chatId, 0, 10)).map((m) => m.rev), [2]);
    await store.messages.put([{ ...message, content: 'v3', rev: 3 }, { ...message, content: 'v4', rev: 4 }]);
    t.same((await store.messages.changedSince(appId, chatId, 0, 10)).map((m) => [m.rev, m.content]), [[4, 'v4']], 'a message given twice in one put is stored as its last version');
  });

  /** Every statement and batch a store sends, and a hook to delay or fail one. */
  const recording = (hook?: (kind: 'execute' | 'batch', queries: string[], run: () => Promise<types.ResultSet>) => Promise<types.ResultSet>) => {
    const sent: { kind: 'execute' | 'batch'; queries: string[]; statements?: { query: string; params: unknown[] }[] }[] = [];
    const db = {
      execute: (query: string, params?: unknown[], options?: driver.QueryOptions) => {
        sent.push({ kind: 'execute', queries: [query] });
        const run = () => client.execute(query, params, options);
        return hook ? hook('execute', [query], run) : run();
      },
      batch: (statements: { query: string; params: unknown[] }[], options?: driver.QueryOptions) => {
        const queries = statements.map((s) => s.query);
        sent.push({ kind: 'batch', queries, statements });
        const run = () => client.batch(statements, options);
        return hook ? hook('batch', queries, run) : run();
      },
    };
    return { db, sent };
  };
  /**
   * A store whose next batch naming `table` fails once with a write timeout (after `fail.next = true`),
   * and four chats it holds, each with message 1.
   */
  const failingOnce = async (table: string) => {
    const fail = { next: false };
    const { db, sent } = recording(async (kind, queries, run) => {
      if (kind === 'batch' && fail.next && queries.some((q) => q.includes(`.${table} `))) {
        fail.next = false;
        throw Object.assign(new Error('write timeout'), { code: 0x1100 });
      }
      return run();
    });
    const store = CassandraNodeStore.open(db, keyspace);
    const chats = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await Promise.all(chats.map((chatId) => store.messages.put([message(chatId, 1)], fence(0, 1))));
    sent.length = 0;
    return { store, sent, chats, fail };
  };
  const appId = randomUUID();
  // No text unless given: these tests count the message path's own writes (a text adds its search rows).
  const message = (chatId: string, seq: number, extra: Partial<StoredMessage> = {}): StoredMessage =>
    ({ appId, chatId, id: newMessageId(seq, T0 + seq), seq, senderId: 'sender', content: '', createdAt: NOW, reactions: [], rev: seq, ...extra });
  const fence = (from: number, to: number) => ({ from: { seq: from, rev: from }, to: { seq: to, rev: to } });
  const cas = (queries: string[]) => queries.some((q) => / IF /.test(q));

  t.test('cassandra: once a node holds a chat, a put of new messages is one batch of one row each, with no compare-and-set', async (t) => {
    const { db, sent } = recording();
    const store = CassandraNodeStore.open(db, keyspace);
    const chatId = randomUUID();
    await store.messages.put([message(chatId, 1)], fence(0, 1));
    t.equal(sent.filter((s) => s.kind === 'batch' && cas(s.queries)).length, 1, 'the first put claims the chat: one compare-and-set');
    sent.length = 0;
    await store.messages.put([2, 3, 4, 5, 6].map((seq) => message(chatId, seq)), fence(1, 6));
    t.same(sent.map(({ kind, queries }) => ({ kind, queries })), [{ kind: 'batch', queries: Array(5).fill(sent[0]?.queries[0]) }], 'the next: one batch, a row per message, nothing else');
    t.match(sent[0]?.queries[0], /^INSERT INTO \w+\.chat_messages /);
    sent.length = 0;
    await store.messages.put([7, 8].map((seq) => message(chatId, seq, { clientKey: `k${seq}` })), fence(6, 8));
    t.same(sent.map((s) => [s.kind, s.queries.length]), [['batch', 2], ['batch', 2]], 'with idempotency keys: the rows, and the key rows (2 mutations a message)');
    t.notOk(sent.some((s) => cas(s.queries)), 'still no compare-and-set');
    // Text: a posting per word, and the word's hour and dictionary row only until a put of them succeeded.
    sent.length = 0;
    await store.messages.put([message(chatId, 9, { content: 'hello world' })], fence(8, 9));
    const tables = () => sent.flatMap((s) => s.queries.map((q) => /(?:INTO|UPDATE) \w+\.(\w+) /.exec(q)?.[1])).sort();
    t.same(tables(), ['chat_messages', 'search_day_hours', 'search_day_hours', 'search_hour_postings', 'search_hour_postings', 'search_terms', 'search_terms'], 'a text: its row, and per word a posting, its hour and its day in the dictionary');
    sent.length = 0;
    await store.messages.put([10, 11].map((seq) => message(chatId, seq, { content: 'hello again' })), fence(9, 10 + 1));
    t.same(tables(), ['chat_messages', 'chat_messages', 'search_day_hours', 'search_hour_postings', 'search_hour_postings', 'search_hour_postings', 'search_hour_postings', 'search_terms'], 'then a word already written costs its posting alone');
    t.same((await store.messages.afterSeq(appId, chatId, 0, 20)).map((m) => m.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    t.equal((await store.messages.byClientKey(appId, chatId, 'sender', 'k8'))?.seq, 8);
    const ttl = (await client.execute(`SELECT TTL(seq) AS ttl FROM ${keyspace}.send_keys WHERE app_id = ? AND chat_id = ? AND sender_id = ? AND client_key = ?`, [appId, chatId, 'sender', 'k8'], { prepare: true })).first();
    t.ok(Number(ttl?.get('ttl')) > 86_000, 'idempotency keys expire after a day');
    await store.writers.release(appId, chatId);
  });

  t.test("cassandra: puts of several chats handed over in one turn leave in one request; one too large leaves alone; a failed request leaves each put in doubt, written again whole", async (t) => {
    const { store, sent, chats, fail } = await failingOnce('chat_messages');
    await Promise.all(chats.map((chatId) => store.messages.put([message(chatId, 2), message(chatId, 3, { clientKey: `k3` })], fence(1, 3))));
    t.same(sent.map((s) => [s.kind, s.queries.length]), [['batch', 12]], 'four chats: one request of their rows and key rows');
    for (const chatId of chats) t.same((await store.messages.afterSeq(appId, chatId, 0, 10)).map((m) => m.seq), [1, 2, 3], 'each chat has its messages');
    t.equal((await store.messages.byClientKey(appId, chats[3]!, 'sender', 'k3'))?.seq, 3, 'and its keys');

    // Larger than a request shares (put-merger.ts MERGE_LIMITS): sent as a put alone would be.
    sent.length = 0;
    const big = 'x'.repeat(6000);
    await Promise.all([
      store.messages.put([message(chats[0]!, 4, { content: big })], fence(3, 4)),
      store.messages.put([message(chats[1]!, 4)], fence(3, 4)),
      store.messages.put([message(chats[2]!, 4)], fence(3, 4)),
    ]);
    t.same(sent.map((s) => s.queries.length).sort(), [1, 2], 'the large put alone, the other two together');
    t.equal((await store.messages.afterSeq(appId, chats[0]!, 3, 10))[0]?.content, big);

    // A request that fails fails every put in it, each with an unknown outcome; each chat's next put
    // first writes it again (same rows, same timestamp), so what the senders retry finds it.
    fail.next = true;
    const outcomes = await Promise.all(chats.slice(0, 2).map((chatId) => store.messages.put([message(chatId, 5)], fence(4, 5)).then(() => 'ok', (e: unknown) => e)));
    t.ok(outcomes.every((o) => o instanceof OutcomeUnknownError), 'both puts of the failed request are in doubt');
    sent.length = 0;
    for (const chatId of chats.slice(0, 2)) await store.messages.put([message(chatId, 6)], fence(5, 6));
    for (const chatId of chats.slice(0, 2)) t.same((await store.messages.afterSeq(appId, chatId, 4, 10)).map((m) => m.seq), [5, 6], 'the put in doubt was written again before the next');
    for (const chatId of chats) await store.writers.release(appId, chatId);
  });

  t.test("cassandra: the index rows of a turn's puts leave in a request of their own; a failed one leaves its puts in doubt, written again with their index rows", async (t) => {
    const { store, sent, chats, fail } = await failingOnce('search_hour_postings');
    await Promise.all(chats.map((chatId) => store.messages.put([message(chatId, 2, { content: 'ferry lantern' })], fence(1, 2))));
    const tablesOf = (queries: string[]) => [...new Set(queries.map((q) => /(?:INTO|UPDATE) \w+\.(\w+) /.exec(q)?.[1]))].sort().join(',');
    t.same(sent.map((s) => tablesOf(s.queries)).sort(), ['chat_messages', 'search_day_hours,search_hour_postings,search_terms'], 'two requests: the four messages, and all their index rows');
    t.equal(sent.flatMap((s) => s.queries).filter((q) => q.includes('.search_hour_postings ')).length, 8, 'a posting per word and message');
    const found = async (word: string) => (await store.search.postings(appId, word, {}, 10)).map((p) => p.logId).sort();
    t.same(await found('lantern'), [...chats].sort(), 'every message found by its word');

    fail.next = true;
    const outcomes = await Promise.all(chats.slice(0, 2).map((chatId) => store.messages.put([message(chatId, 3, { content: 'harbor' })], fence(2, 3)).then(() => 'ok', (e: unknown) => e)));
    t.ok(outcomes.every((o) => o instanceof OutcomeUnknownError), 'the index request failed: both puts are in doubt');
    for (const chatId of chats.slice(0, 2)) await store.messages.put([message(chatId, 4)], fence(3, 4));
    t.same(await found('harbor'), chats.slice(0, 2).sort(), 'written again before the next put, index rows with it');
    for (const chatId of chats) await store.writers.release(appId, chatId);
  });

  t.test('cassandra: the index rows of many messages with words never seen fall in a few partitions, not one a word', async (t) => {
    const { db, sent } = recording();
    const store = CassandraNodeStore.open(db, keyspace);
    const chats = Array.from({ length: 8 }, () => randomUUID());
    await Promise.all(chats.map((chatId) => store.messages.put([message(chatId, 1)], fence(0, 1))));
    sent.length = 0;
    // 8 chats × 12 messages, each with two words no message had: a number and a token.
    const unique = (c: number, i: number) => `${c * 1000 + i} t${randomUUID().slice(0, 8)}x${c}y${i}`;
    await Promise.all(chats.map((chatId, c) => store.messages.put(Array.from({ length: 12 }, (_, i) => message(chatId, i + 2, { content: unique(c, i) })), fence(1, 13))));
    const index = sent.flatMap((s) => s.statements ?? []).filter((s) => /\.search_/.test(s.query));
    const rows = (table: string) => index.filter((s) => s.query.includes(`.${table} `));
    // A partition: the table and its partition key's values, which come first (search.ts).
    const partitions = (table: string, keyColumns: number) => new Set(rows(table).map((s) => JSON.stringify(s.params.slice(0, keyColumns)))).size;
    t.equal(rows('search_hour_postings').length, 192, 'a posting per word of each message');
    t.equal(rows('search_day_hours').length, 192, 'each new word its hour');
    t.equal(rows('search_terms').length, 192, 'and its day in the dictionary');
    t.ok(partitions('search_hour_postings', 3) <= 16, `the postings in at most 16 partitions (the hour's shards): ${partitions('search_hour_postings', 3)}`);
    t.equal(partitions('search_day_hours', 2), 1, "the hours in one (the application's day)");
    t.equal(partitions('search_terms', 2), 11, 'the dictionary rows in one a first character (0–9 and t)');
    for (const [c, chatId] of chats.entries()) {
      const found = await store.search.postings(appId, `${c * 1000 + 11}`, {}, 10);
      t.same(found.map((p) => p.logId), [chatId], `a word of chat ${c}, found`);
    }
    for (const chatId of chats) await store.writers.release(appId, chatId);
  });

  t.test('cassandra: index rows handed over while two flushes of them are in flight wait, and leave together when one comes back', async (t) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const isIndex = (queries: string[]) => queries.some((q) => q.includes('.search_hour_postings '));
    const { db, sent } = recording(async (kind, queries, run) => {
      if (kind === 'batch' && isIndex(queries)) await held;
      return run();
    });
    const store = CassandraNodeStore.open(db, keyspace);
    const chats = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await Promise.all(chats.map((chatId) => store.messages.put([message(chatId, 1)], fence(0, 1))));
    const indexRequests = () => sent.filter((s) => s.kind === 'batch' && isIndex(s.queries));
    const messageRequests = () => sent.filter((s) => s.kind === 'batch' && s.queries.some((q) => q.includes('.chat_messages ')));
    const until = async (check: () => boolean) => {
      for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
      return check();
    };
    // A word of this test alone (the application is the file's).
    const word = `lamp${randomUUID().replaceAll('-', '').slice(0, 10)}`;
    const put = (i: number) => store.messages.put([message(chats[i]!, 2, { content: `ferry ${word}` })], fence(1, 2));
    const puts = [put(0)];
    t.ok(await until(() => indexRequests().length === 1), 'the first put: its index rows leave at once');
    puts.push(put(1));
    t.ok(await until(() => indexRequests().length === 2), 'the second, in a later turn: a flush of its own (two may be in flight)');
    const before = messageRequests().length;
    puts.push(put(2), put(3));
    t.ok(await until(() => messageRequests().slice(before).flatMap((s) => s.queries).length >= 2), 'the next two puts sent their messages');
    // A turn's index rows are flushed (or held) before its messages are sent (put-merger.ts): nothing to wait for.
    t.equal(indexRequests().length, 2, 'but their index rows wait while two flushes are in flight');
    release();
    await Promise.all(puts);
    const third = indexRequests().slice(2);
    t.equal(third.length, 1, 'they leave together, once a flush came back');
    t.equal(third[0]!.queries.filter((q) => q.includes('.search_hour_postings ')).length, 4, "both puts' postings in that one request");
    t.same((await store.search.postings(appId, word, {}, 10)).map((p) => p.logId).sort(), [...chats].sort(), 'and every message is found');
    for (const chatId of chats) await store.writers.release(appId, chatId);
  });

  t.test('cassandra: a claim whose compare-and-set times out finds out whether it was applied', async (t) => {
    const timeouts = {
      'the server timed out': () => new driver.errors.ResponseError(0x1100, 'CAS operation timed out'),
      'the driver gave up waiting': () => new driver.errors.OperationTimedOutError('no reply in time', '127.0.0.1:9042'),
    };
    for (const [name, timeout] of Object.entries(timeouts)) {
      for (const applies of [true, false]) {
        let done = false;
        const { db } = recording(async (kind, queries, run) => {
          if (done || kind !== 'batch' || !queries.some((q) => q.includes('writer_epoch = ?'))) return run();
          done = true;
          if (applies) await run();
          throw timeout();
        });
        const store = CassandraNodeStore.open(db, keyspace);
        const chatId = randomUUID();
        await store.messages.put([message(chatId, 1)], fence(0, 1));
        t.same((await store.messages.afterSeq(appId, chatId, 0, 10)).map((m) => m.seq), [1], `${name}, ${applies ? 'applied' : 'not applied'}: the put goes on`);
        const other = CassandraNodeStore.open(client, keyspace);
        const refused = await other.messages.put([message(chatId, 2)], fence(1, 2)).then(() => undefined, (e: unknown) => e);
        t.equal(refused instanceof FencedError && refused.holder?.id, store.writers.self.id, 'and the chat is held by the instance that claimed it');
        await store.writers.release(appId, chatId);
      }
    }
  });

  /** Hold times short enough for a test: trusted for 1 s after a claim or renewal, free 2 s after. */
  const quick = { ttlSeconds: 2, marginMs: 1000, minRemainingMs: 300, renewBelowMs: 500, minReserve: 100, maxReserve: 100, putWindow: 256 };
  /** Tries a fenced put every 100 ms until it applies (the other holder's cell has to expire first). */
  const eventually = async (put: () => Promise<void>, withinMs: number) => {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const error = await put().then(() => undefined, (e: unknown) => e);
      if (error === undefined) return;
      if (!(error instanceof FencedError) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  t.test("cassandra: a crashed holder's chat is taken once its hold times out, past every number it had taken", async (t) => {
    const crashed = CassandraNodeStore.open(client, keyspace, { id: 'crashed', address: '127.0.0.1:1' }, quick);
    const next = CassandraNodeStore.open(client, keyspace, { id: 'next' }, quick);
    const chatId = randomUUID();
    await crashed.messages.put([message(chatId, 1), message(chatId, 2)], fence(0, 2));
    const refused = await next.messages.put([message(chatId, 3)], fence(2, 3)).then(() => undefined, (e: unknown) => e);
    t.same(refused instanceof FencedError && refused.holder, { id: 'crashed', address: '127.0.0.1:1' }, 'while it holds the chat, others are told who does, and where');
    // `crashed` never releases and never writes again; it took numbers up to 0 + 100 when it claimed.
    const head = await next.messages.lastSeq(appId, chatId);
    t.equal(head, 100, 'the head others see covers every number the holder took');
    t.same(await next.messages.newest(appId, chatId), { seq: 2, rev: 2 }, 'while the newest message and revision stored are those written');
    const started = Date.now();
    await eventually(() => next.messages.put([message(chatId, 101)], fence(100, 101)), 5000);
    t.ok(Date.now() - started < 4000, `taken over within the hold time (${Date.now() - started} ms)`);
    t.same((await next.messages.afterSeq(appId, chatId, 0, 10)).map((m) => m.seq), [1, 2, 101], 'numbering goes on past the numbers taken');
    const stale = await crashed.messages.put([message(chatId, 3)], fence(2, 3)).then(() => undefined, (e: unknown) => e);
    t.equal(stale instanceof FencedError && stale.holder?.id, 'next', 'the old holder, back, is refused: it lost the chat');
    t.same((await next.messages.afterSeq(appId, chatId, 0, 10)).map((m) => m.seq), [1, 2, 101], 'and wrote nothing');
  });

  t.test('cassandra: a write that lands after its hold lapsed counts only if no one took the chat meanwhile', async (t) => {
    let delayMs = 0;
    const { db } = recording(async (kind, queries, run) => {
      if (kind === 'batch' && queries[0]?.includes('.chat_messages ') && delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return run();
    });
    const slow = CassandraNodeStore.open(db, keyspace, { id: 'slow' }, quick);
    const chatId = randomUUID();
    await slow.messages.put([message(chatId, 1)], fence(0, 1));
    delayMs = 1500;
    await slow.messages.put([message(chatId, 2)], fence(1, 2));
    t.pass('landed after the hold’s 1 s, but a renewal found the epoch unchanged: acknowledged');

    const rival = CassandraNodeStore.open(client, keyspace, { id: 'rival' }, quick);
    delayMs = 3500;
    const late = slow.messages.put([message(chatId, 3)], fence(2, 3)).then(() => undefined, (e: unknown) => e);
    // The slow writer's cell expires while its batch is on the way: the rival takes the chat.
    let rivalSeq = 0;
    await eventually(async () => {
      const head = await rival.messages.lastSeq(appId, chatId);
      await rival.messages.put([message(chatId, head + 1)], fence(head, head + 1));
      rivalSeq = head + 1;
    }, 6000);
    const outcome = await late;
    t.ok(outcome instanceof OutcomeUnknownError, 'the slow write is not acknowledged: its outcome is unknown (the client retries with its key)');
    t.notOk(outcome instanceof FencedError, 'never reported as "nothing written"');
    const seqs = (await rival.messages.afterSeq(appId, chatId, 0, 10)).map((m) => m.seq);
    t.same(seqs, [1, 2, rivalSeq], 'the row that landed after the rival settled the tail stays deleted, and the rival numbered past every number the slow writer had taken');
    t.ok(rivalSeq > 100, `no collision is possible: the rival started at ${rivalSeq}`);
    await rival.writers.release(appId, chatId);
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
