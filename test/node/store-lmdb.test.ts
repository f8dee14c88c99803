import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { open } from 'lmdb';
import { v7 as uuidv7 } from 'uuid';
import { EventIds } from '../../common/webhooks/index.ts';
import { LmdbNodeStore, newMessageId, type Chat, type Member, type OutboxEvent, type StoredMessage } from '../../node/store/index.ts';
import { bucketOf } from '../../node/store/buckets.ts';
import { nodeStoreConformance } from './store-conformance.ts';

const freshDir = () => mkdtemp(join(tmpdir(), 'node-store-'));

nodeStoreConformance(t, 'lmdb', async () => {
  const dir = await freshDir();
  const store = LmdbNodeStore.open(dir);
  const others: LmdbNodeStore[] = [];
  return {
    store,
    another: async () => {
      const other = LmdbNodeStore.open(dir);
      others.push(other);
      return other;
    },
    cleanup: async () => {
      for (const other of others) await other.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

t.test('lmdb: chats, members, read marks and messages survive close and reopen', async (t) => {
  const dir = await freshDir();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const now = '2030-01-01T00:00:00.000Z';
  const appId = randomUUID();
  const userId = randomUUID();
  const chat: Chat = { appId, id: randomUUID(), kind: 'group', name: 'G', createdBy: userId, createdAt: now, updatedAt: now, lastSeq: 1, lastActivityAt: now };
  const member: Member = { appId, chatId: chat.id, userId, role: 'owner', joinedAt: now, readSeq: 0 };
  const message: StoredMessage = { appId, chatId: chat.id, id: uuidv7(), seq: 1, senderId: userId, content: 'kept', createdAt: now, reactions: [], clientKey: 'k1' };

  const writer = LmdbNodeStore.open(dir);
  await writer.chats.create(chat, [member]);
  await writer.messages.put([message]);
  await writer.chats.markRead(appId, chat.id, userId, 1);
  await writer.close();

  const reader = LmdbNodeStore.open(dir);
  t.teardown(() => reader.close());
  t.same(await reader.chats.get(appId, chat.id), chat);
  t.same(await reader.chats.member(appId, chat.id, userId), { ...member, readSeq: 1 });
  t.same(await reader.chats.chatsOf(appId, userId), [chat.id]);
  t.same(await reader.messages.pageBackward(appId, chat.id, undefined, 10), [message]);
  t.same(await reader.messages.byClientKey(appId, chat.id, userId, 'k1'), message);
  t.equal(await reader.messages.lastSeq(appId, chat.id), 1);
});

t.test("lmdb: a store written before the activity index gets its users' chats indexed when it opens", async (t) => {
  const dir = await freshDir();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const appId = randomUUID();
  const userId = randomUUID();
  const chat = (at: string): Chat => ({ appId, id: randomUUID(), kind: 'group', name: 'G', createdBy: userId, createdAt: at, updatedAt: at, lastSeq: 0, lastActivityAt: at });
  const [older, newer] = [chat('2030-01-01T00:00:00.000Z'), chat('2030-01-02T00:00:00.000Z')];
  // The earlier layout: the chat rows, members, and a membership key whose value was `true`.
  const raw = open({ path: dir, maxDbs: 16, compression: false });
  const db = raw.openDB<unknown, (string | number)[]>({ name: 'chats', encoding: 'msgpack' });
  for (const c of [older, newer]) {
    await db.put(['c', appId, c.id], c);
    await db.put(['m', appId, c.id, userId], { appId, chatId: c.id, userId, role: 'owner', joinedAt: c.createdAt, readSeq: 0 } satisfies Member);
    await db.put(['uc', appId, userId, c.id], true);
  }
  await db.put(['uc', appId, userId, randomUUID()], true); // a chat that is gone
  await raw.close();

  const store = LmdbNodeStore.open(dir);
  t.teardown(() => store.close());
  t.same(await store.chats.chatsByActivity(appId, userId, undefined, 10), [{ at: newer.lastActivityAt, chatId: newer.id }, { at: older.lastActivityAt, chatId: older.id }], 'newest first, at their activity times');
  t.same((await store.chats.chatsOf(appId, userId)).sort(), [older.id, newer.id].sort(), 'the key of a chat that is gone is dropped');
  t.same(await store.chats.chatCounts(appId, [userId]), new Map([[userId, 2]]));
  await store.chats.removeMember(appId, older.id, userId);
  t.same(await store.chats.chatCounts(appId, [userId]), new Map([[userId, 1]]), 'and counts go on from there');
});

/** A store in a fresh directory, closed and removed when the test ends. */
async function storeFor(t: Test): Promise<LmdbNodeStore> {
  const dir = await freshDir();
  const store = LmdbNodeStore.open(dir);
  t.teardown(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  return store;
}

t.test('lmdb: outbox rows of the layout of one event per row are read, finished and retired with the new ones', async (t) => {
  const store = await storeFor(t);
  const ids = new EventIds();
  const owner = `node-${randomUUID()}`;
  const event = (): OutboxEvent => {
    const id = ids.next();
    return { id, appId: 'app', type: 'message.new', body: JSON.stringify({ id }) };
  };
  // Written as an older version did: ['e', owner, id] → one pending event.
  const old = [event(), event()];
  await store.outbox.t.root.transaction(() => {
    for (const e of old) store.outbox.t.db.put(['e', owner, e.id], { event: e, done: ['endpoint-a'] });
  });
  const fresh = [event(), event(), event()];
  await store.outbox.append(owner, fresh);
  t.same((await store.outbox.pending(owner, undefined, 10)).map((p) => [p.event.id, p.done]), [...old.map((e) => [e.id, ['endpoint-a']]), ...fresh.map((e) => [e.id, []])], 'both layouts, in id order');
  t.same((await store.outbox.pending(owner, old[1]!.id, 10)).map((p) => p.event.id), [old[1]!.id, ...fresh.map((e) => e.id)], 'from an old row');
  t.same((await store.outbox.pending(owner, fresh[1]!.id, 10)).map((p) => p.event.id), [fresh[1]!.id, fresh[2]!.id], 'from inside a new row');
  await store.outbox.progress(owner, [old[0]!.id, fresh[1]!.id], [{ event: old[1]!, done: ['endpoint-a', 'endpoint-b'] }]);
  t.same((await store.outbox.pending(owner, undefined, 10)).map((p) => [p.event.id, p.done]), [[old[1]!.id, ['endpoint-a', 'endpoint-b']], [fresh[0]!.id, []], [fresh[2]!.id, []]], 'finished ones gone from either layout, a partial one updated');
  await store.outbox.progress(owner, [old[1]!.id, fresh[0]!.id], [], fresh[2]!.id);
  t.same((await store.outbox.pending(owner, undefined, 10)).map((p) => p.event.id), [fresh[2]!.id], 'the mark covers what is below it');
  t.same([...store.outbox.t.db.getKeys({ start: ['e', owner], end: ['e', owner, '\uffff'] })].length, 1, 'rows wholly below the mark are removed; the row holding the mark stays');
  await store.outbox.progress(owner, [fresh[2]!.id], []);
  t.same(await store.outbox.pending(owner, undefined, 10), [], 'all finished');
  t.notOk((await store.outbox.owners()).includes(owner), 'an owner with nothing left is not listed');
});

t.test('lmdb: outbox rows of the layout of one object per event are read and finished with the new ones; events written with their change keep no check', async (t) => {
  const store = await storeFor(t);
  const ids = new EventIds();
  const owner = store.writers.self.id;
  const appId = randomUUID();
  const chatId = randomUUID();
  const event = (): OutboxEvent => {
    const id = ids.next();
    return { id, appId, type: 'message.new', body: JSON.stringify({ id }) };
  };
  // Written as the previous version did: ['e', owner, first, last] → a PendingEvent per event.
  const old = [event(), event()];
  await store.outbox.t.root.transaction(() => {
    store.outbox.t.db.put(['e', owner, old[0]!.id, old[1]!.id], old.map((e) => ({ event: { ...e, check: { chatId, messageId: 'm-old', rev: 1 } }, done: [] })));
  });
  const m: StoredMessage = { appId, chatId, id: uuidv7(), seq: 1, senderId: randomUUID(), content: 'with event', createdAt: new Date().toISOString(), reactions: [], rev: 1 };
  const fresh = [event(), event()];
  await store.messages.put([m], { from: { seq: 0, rev: 0 }, to: { seq: 1, rev: 1 } }, fresh.map((e) => ({ ...e, check: { chatId, messageId: m.id, rev: 1 } })));
  const pending = await store.outbox.pending(owner, undefined, 10);
  t.same(
    pending.map((p) => p.event),
    [...old.map((e) => ({ ...e, check: { chatId, messageId: 'm-old', rev: 1 } })), ...fresh],
    'every field read back from both layouts, in id order; the events written with their message carry no check (nothing for a recovery to look for)',
  );
  await store.outbox.progress(owner, [old[0]!.id, fresh[0]!.id], [{ event: fresh[1]!, done: ['endpoint-a'] }]);
  t.same(
    (await store.outbox.pending(owner, undefined, 10)).map((p) => [p.event.id, p.done]),
    [
      [old[1]!.id, []],
      [fresh[1]!.id, ['endpoint-a']],
    ],
    'finished ones gone from either layout, a partial one updated',
  );
  await store.outbox.progress(owner, [old[1]!.id, fresh[1]!.id], []);
  t.same(await store.outbox.pending(owner, undefined, 10), [], 'all finished');
});

t.test('lmdb: a message is kept as a record of its values, in JSON text; messages kept as objects or arrays before are read, paged and rewritten with them', async (t) => {
  const dir = await freshDir();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const appId = randomUUID();
  const chatId = randomUUID();
  const userId = randomUUID();
  const at = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s)).toISOString();
  // Written as an older version did: the message as an object, its bucket and seq index entries.
  const old: StoredMessage = { appId, chatId, id: newMessageId(1), seq: 1, senderId: userId, content: 'from before', createdAt: at(1), reactions: [], clientKey: 'k1', rev: 1 };
  const bucket = bucketOf(old.id);
  const raw = open({ path: dir, maxDbs: 16, compression: false });
  const db = raw.openDB<unknown, (string | number)[]>({ name: 'messages', encoding: 'msgpack' });
  await db.put(['m', appId, chatId, bucket, old.id], old);
  await db.put(['b', appId, chatId, bucket], true);
  await db.put(['s', appId, chatId, 1], [bucket, old.id]);
  await db.put(['r', appId, chatId, 1], [bucket, old.id]);
  await db.put(['k', appId, chatId, userId, 'k1'], old.id);
  // Written as the version before JSON records did: a msgpack array, an absent field undefined.
  const arrayChat = randomUUID();
  const asArray: StoredMessage = { appId, chatId: arrayChat, id: newMessageId(4), seq: 1, senderId: userId, content: 'an array record', createdAt: at(7), reactions: [], clientKey: 'k9' };
  await db.put(['m', appId, arrayChat, bucketOf(asArray.id), asArray.id], [1, appId, arrayChat, asArray.id, 1, userId, 'an array record', at(7), [], undefined, 'k9']);
  await db.put(['b', appId, arrayChat, bucketOf(asArray.id)], true);
  await db.put(['s', appId, arrayChat, 1], [bucketOf(asArray.id), asArray.id]);
  await raw.close();

  const store = LmdbNodeStore.open(dir);
  t.teardown(() => store.close());
  // Every field a message can have, and one with none of the optional ones.
  const full: StoredMessage = {
    appId, chatId, id: newMessageId(2), seq: 2, senderId: userId, content: 'every field', createdAt: at(2),
    editedAt: at(3), deletedAt: at(4), replyToId: old.id, hiddenAt: at(5),
    reactions: [{ reactionId: randomUUID(), userId, reaction: '👍', createdAt: at(3) }],
    clientKey: 'k2', attachments: [{ id: randomUUID(), name: 'a.png', size: 10, type: 'image/png', width: 1, height: 1 }],
    parentId: old.id, copySeq: 7, thread: { lastSeq: 1, replyCount: 1, lastReplyAt: at(3), participants: [userId] },
    mentions: [userId], type: 'system', data: { nested: { list: [1, 'two', null] } }, rev: 2,
  };
  const bare: StoredMessage = { appId, chatId, id: newMessageId(3), seq: 3, senderId: userId, content: 'no extras', createdAt: at(6), reactions: [] };
  await store.messages.put([full, bare]);
  for (const m of [full, bare]) {
    const read = await store.messages.get(appId, chatId, m.id);
    t.strictSame(read, m, `${m.content}: read back as written`);
    t.same(Object.keys(read!).sort(), Object.keys(m).sort(), `${m.content}: no field added or lost`);
  }
  // The value as LMDB holds it (the table is private to the store).
  const kept = (store.messages['t'] as { db: { get(key: unknown[]): unknown } }).db.get(['m', appId, chatId, bucketOf(bare.id), bare.id]);
  t.type(kept, 'string', 'a new message is kept as the JSON text of its values');
  t.ok(Array.isArray(JSON.parse(kept as string)), 'an array of them');
  t.notOk((kept as string).includes('senderId'), 'without its field names');
  t.strictSame(await store.messages.get(appId, chatId, old.id), old, 'the message kept as an object is read as it was');
  t.strictSame(await store.messages.get(appId, arrayChat, asArray.id), asArray, 'the message kept as an array is read as it was');
  t.strictSame(await store.messages.afterSeq(appId, arrayChat, 0, 10), [asArray], 'and listed');
  t.strictSame((await store.messages.pageBackward(appId, chatId, undefined, 10)).map((m) => m.id), [bare.id, full.id, old.id], 'paged with the new ones');
  t.strictSame((await store.messages.afterSeq(appId, chatId, 0, 10)).map((m) => m.seq), [1, 2, 3]);
  t.strictSame(await store.messages.byClientKey(appId, chatId, userId, 'k1'), old);
  // Rewritten (an edit): read through its old form, written as a record.
  const edited: StoredMessage = { ...old, content: 'edited', editedAt: at(9), rev: 4 };
  await store.messages.put([edited]);
  t.strictSame(await store.messages.get(appId, chatId, old.id), edited, 'the edit is read back');
  t.strictSame((await store.messages.changedSince(appId, chatId, 2, 10)).map((m) => m.id), [old.id], 'its revision index moved with it');
});
