import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { open } from 'lmdb';
import { v7 as uuidv7 } from 'uuid';
import { LmdbNodeStore, type Chat, type Member, type StoredMessage } from '../../node/store/index.ts';
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
