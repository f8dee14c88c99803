import { randomUUID } from 'node:crypto';
import t from 'tap';
import { v7 as uuidv7 } from 'uuid';
import { migrate } from '../../common/cassandra/index.ts';
import { bucketOf } from '../../node/store/buckets.ts';
import { CassandraNodeStore, newMessageId, nodeMigrations } from '../../node/store/index.ts';
import { NOW, T0 } from '../helpers/fixed-clock.ts';
import { requireService, testKeyspace } from '../helpers/index.ts';

const cassandra = await requireService('cassandra', (line) => t.comment(line));
if (!cassandra) t.skip('cassandra not running', () => undefined);
else {
  t.test('npm run schema upgrades a keyspace of the first layout: its messages stay readable and chats go on', async (t) => {
    const { client, keyspace } = await testKeyspace(t, cassandra, 'chat_upgrade');
    const firstLayout = nodeMigrations.filter((m) => /^node-00[123]-/.test(m.name));
    t.equal(firstLayout.length, 3);
    await migrate(client, keyspace, firstLayout);

    // A chat as the first layout stored it: rows by day bucket with random UUIDv7 ids, an edit
    // (revision 6), an idempotency key, and a head that took numbers beyond its messages.
    const appId = randomUUID();
    const chatId = randomUUID();
    const senderId = randomUUID();
    const old = Array.from({ length: 5 }, (_, i) => ({ id: uuidv7({ msecs: T0 + i * 86_400_000 }), seq: i + 1, rev: i + 1, content: `old ${i + 1}` }));
    old[1] = { ...old[1]!, rev: 6, content: 'old 2, edited' };
    for (const m of old) {
      await client.execute(
        `INSERT INTO ${keyspace}.messages (app_id, chat_id, bucket, id, seq, sender_id, content, created_at, edited_at, reactions, client_key, rev) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [appId, chatId, bucketOf(m.id), m.id, m.seq, senderId, m.content, NOW, m.rev === 6 ? NOW : null, '[]', m.seq === 3 ? 'key-3' : null, m.rev],
        { prepare: true },
      );
    }
    await client.execute(`INSERT INTO ${keyspace}.chat_heads (app_id, chat_id, seq, rev) VALUES (?, ?, ?, ?)`, [appId, chatId, 7, 8], { prepare: true });
    await client.execute(`INSERT INTO ${keyspace}.chat_members (app_id, chat_id, user_id, role, joined_at, read_seq) VALUES (?, ?, ?, ?, ?, ?)`, [appId, chatId, senderId, 'owner', NOW, 0], { prepare: true });
    // The chat row and the user's membership pointer as the first layout kept them (no activity
    // index), and a pointer left to a chat that is gone.
    await client.execute(`INSERT INTO ${keyspace}.chats (app_id, id, kind, name, created_by, created_at, updated_at, last_seq, last_activity_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, [appId, chatId, 'group', 'Old', senderId, NOW, NOW, 5, NOW], { prepare: true });
    const goneChatId = randomUUID();
    for (const id of [chatId, goneChatId]) await client.execute(`INSERT INTO ${keyspace}.user_chats (app_id, user_id, chat_id) VALUES (?, ?, ?)`, [appId, senderId, id], { prepare: true });

    const applied = await migrate(client, keyspace, nodeMigrations);
    t.same(applied, ['node-004-chat-log', 'node-005-copy-first-layout', 'node-006-signing-keyring', 'node-007-user-chat-index', 'node-008-webhook-outbox', 'node-009-outbox-change-checks', 'node-010-moderation', 'node-011-user-blocks', 'node-012-blocklists', 'node-013-chat-moderation', 'node-014-member-count', 'node-015-session-markers', 'node-016-message-attachments', 'node-017-custom-data', 'node-018-mentions-pins', 'node-019-threads', 'node-020-thread-inbox', 'node-021-search', 'node-022-search-backfill', 'node-023-search-shards', 'node-024-push-devices', 'node-025-push-chat-mutes', 'node-026-search-days'], 'the upgrade applies the new layout, copies the messages, indexes chats by activity (and adds the later tables)');
    t.same(await migrate(client, keyspace, nodeMigrations), [], 'and running it again does nothing');

    const store = CassandraNodeStore.open(client, keyspace);
    const contents = (list: { content: string }[]) => list.map((m) => m.content);
    t.same(contents(await store.messages.afterSeq(appId, chatId, 0, 10)), old.map((m) => m.content), 'every old message, in seq order');
    t.equal((await store.messages.get(appId, chatId, old[3]!.id))?.seq, 4, 'found by its old id');
    t.same(contents(await store.messages.pageBackward(appId, chatId, old[3]!.id, 10)), ['old 3', 'old 2, edited', 'old 1'], 'paged from an old id');
    t.equal((await store.messages.byClientKey(appId, chatId, senderId, 'key-3'))?.seq, 3, 'its idempotency key still finds it');
    t.same((await store.messages.changedSince(appId, chatId, 0, 10)).map((m) => m.rev), [1, 3, 4, 5, 6], 'revisions as before');
    t.same([await store.messages.lastSeq(appId, chatId), await store.messages.lastRev(appId, chatId)], [7, 8], 'the numbers the old head had taken stay taken');
    t.same(await store.chats.chatsByActivity(appId, senderId, undefined, 10), [{ at: NOW, chatId }], "the user's chat is in its activity index, at the chat's activity time");
    t.same(await store.chats.chatsOf(appId, senderId), [chatId], 'a pointer to a chat that is gone is not a membership');
    t.same(await store.chats.chatCounts(appId, [senderId]), new Map([[senderId, 1]]), 'and the user is counted in one chat');

    // The chat goes on in the new layout, after the old head.
    const fresh = [8, 9].map((seq, i) => ({ appId, chatId, id: newMessageId(seq, T0 + 10 * 86_400_000 + i), seq, senderId, content: `new ${seq}`, createdAt: NOW, reactions: [], rev: seq + 1 }));
    await store.messages.put(fresh, { from: { seq: 7, rev: 8 }, to: { seq: 9, rev: 10 } });
    t.same(contents(await store.messages.pageBackward(appId, chatId, undefined, 4)), ['new 9', 'new 8', 'old 5', 'old 4'], 'the newest page spans both');
    t.same(contents(await store.messages.afterSeq(appId, chatId, 4, 10)), ['old 5', 'new 8', 'new 9']);
    t.same((await store.messages.changedSince(appId, chatId, 5, 10)).map((m) => m.rev), [6, 9, 10], 'changes of old and new messages, in revision order');
    t.same((await store.messages.changedSince(appId, chatId, 8, 10)).map((m) => m.rev), [9, 10], 'only the new ones after the old head');
    await store.writers.release(appId, chatId);
  });

  t.test('a keyspace before custom data (node-016) upgrades: its rows read as before, and take data and types after', async (t) => {
    const { client, keyspace } = await testKeyspace(t, cassandra, 'chat_upgrade_data');
    const before = nodeMigrations.slice(0, nodeMigrations.findIndex((m) => m.name === 'node-017-custom-data'));
    await migrate(client, keyspace, before);
    const appId = randomUUID();
    const chatId = randomUUID();
    const userId = randomUUID();
    const id = newMessageId(1, T0);
    // The rows as a node of the previous release wrote them.
    await client.execute(`INSERT INTO ${keyspace}.users (app_id, id, username, display_name, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`, [appId, userId, 'old-user', 'Old', NOW, NOW], { prepare: true });
    await client.execute(`INSERT INTO ${keyspace}.chats (app_id, id, kind, name, created_by, created_at, updated_at, last_seq, last_activity_at, member_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [appId, chatId, 'group', 'Old', userId, NOW, NOW, 1, NOW, 1], { prepare: true });
    await client.execute(`INSERT INTO ${keyspace}.chat_messages (app_id, chat_id, block, seq, id, sender_id, content, created_at, reactions, rev, crev) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [appId, chatId, 0, 1, id, userId, 'old message', NOW, '[]', 1, 1], { prepare: true });

    t.same(await migrate(client, keyspace, nodeMigrations), ['node-017-custom-data', 'node-018-mentions-pins', 'node-019-threads', 'node-020-thread-inbox', 'node-021-search', 'node-022-search-backfill', 'node-023-search-shards', 'node-024-push-devices', 'node-025-push-chat-mutes', 'node-026-search-days'], 'the upgrade adds the columns');
    const store = CassandraNodeStore.open(client, keyspace);
    const old = await store.messages.get(appId, chatId, id);
    t.same([old?.content, old?.type, old?.data], ['old message', undefined, undefined], 'an old message reads as a regular one without data');
    t.equal((await store.users.get(appId, userId))?.data, undefined, 'an old user has none');
    t.equal((await store.chats.get(appId, chatId))?.data, undefined, 'nor an old chat');

    const user = (await store.users.get(appId, userId))!;
    await store.users.update({ ...user, data: { tier: 'gold' } });
    t.same((await store.users.get(appId, userId))?.data, { tier: 'gold' }, 'an old user takes data');
    const chat = (await store.chats.get(appId, chatId))!;
    await store.chats.update({ ...chat, data: { topic: 'x' } });
    t.same((await store.chats.get(appId, chatId))?.data, { topic: 'x' }, 'an old chat takes data');
    await store.messages.put([{ ...old!, content: 'edited', editedAt: NOW, data: { card: 1 }, rev: 2 }]);
    const system = { appId, chatId, id: newMessageId(2, T0 + 1), seq: 2, senderId: userId, content: 'notice', createdAt: NOW, reactions: [], rev: 3, type: 'system' as const, data: { event: 'x' } };
    await store.messages.put([system]);
    t.same((await store.messages.afterSeq(appId, chatId, 0, 10)).map((m) => [m.content, m.type, m.data]), [['edited', undefined, { card: 1 }], ['notice', 'system', { event: 'x' }]], 'old and new messages take data and types');
  });
}
