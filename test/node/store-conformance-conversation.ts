import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { newMessageId, type Chat, type ChatUser, type NodeStore, type StoredMessage } from '../../node/store/index.ts';
import { LATER, NOW } from '../helpers/fixed-clock.ts';

/** The conversation model (README, "Custom data"): part of the node store conformance suite (see store-conformance.ts). */
export function conversationConformance(withStore: (title: string, body: (t: Test, store: NodeStore) => Promise<void>) => void): void {
  const card = { kind: 'poll', options: ['a', 'b'], nested: { deep: [1, { x: null }] }, unicode: 'é 我们 🎉' };

  withStore('custom data: users, chats and messages store it as given, a rewrite without it clears it, and a message keeps its type', async (t, store) => {
    const appId = randomUUID();
    const u: ChatUser = { appId, id: randomUUID(), username: `u-${randomUUID()}`, displayName: 'U', createdAt: NOW, updatedAt: NOW, data: card };
    await store.users.create(u);
    t.same((await store.users.get(appId, u.id))?.data, card, 'a user created with data');
    const { data: _u, ...plainUser } = u;
    await store.users.update({ ...plainUser, updatedAt: LATER });
    t.equal((await store.users.get(appId, u.id))?.data, undefined, 'an update without it clears it');

    const c: Chat = { appId, id: randomUUID(), kind: 'group', name: 'g', createdBy: u.id, createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW, data: card };
    await store.chats.create(c, [{ appId, chatId: c.id, userId: u.id, role: 'owner', joinedAt: NOW, readSeq: 0 }]);
    t.same((await store.chats.get(appId, c.id))?.data, card, 'a chat created with data');
    await store.chats.update({ ...c, data: { v: 2 } });
    t.same((await store.chats.get(appId, c.id))?.data, { v: 2 }, 'replaced by an update');
    const { data: _c, ...plainChat } = c;
    await store.chats.writeActivity({ ...plainChat, lastSeq: 1, lastActivityAt: LATER }, []);
    t.equal((await store.chats.get(appId, c.id))?.data, undefined, 'a row written without it has none');

    const base = { appId, chatId: c.id, senderId: u.id, createdAt: NOW, reactions: [] };
    const system: StoredMessage = { ...base, id: newMessageId(1), seq: 1, content: 'notice', type: 'system', data: card, rev: 1 };
    const regular: StoredMessage = { ...base, id: newMessageId(2), seq: 2, content: 'plain', rev: 2 };
    await store.messages.put([system, regular], { from: { seq: 0, rev: 0 }, to: { seq: 2, rev: 2 } });
    const read = await store.messages.afterSeq(appId, c.id, 0, 10);
    t.same(read.map((m) => [m.type, m.data]), [['system', card], [undefined, undefined]], 'a system message with data, a regular one without');
    t.same(await store.messages.get(appId, c.id, system.id), system, 'read back whole');
    const { data: _m, ...withoutData } = system;
    await store.messages.put([{ ...withoutData, content: 'edited', editedAt: LATER, rev: 3 }], { from: { seq: 2, rev: 2 }, to: { seq: 2, rev: 3 } });
    const edited = await store.messages.get(appId, c.id, system.id);
    t.same([edited?.content, edited?.type, edited?.data], ['edited', 'system', undefined], 'a rewrite without data clears it, and keeps the type');
    t.same((await store.messages.changedSince(appId, c.id, 2, 10)).map((m) => m.data), [undefined], 'as replay reads it');
    await store.writers.release(appId, c.id);
  });

  withStore('pins: a chat row keeps its pins in order, and a row written without them has none', async (t, store) => {
    const appId = randomUUID();
    const c: Chat = { appId, id: randomUUID(), kind: 'group', name: 'g', createdBy: randomUUID(), createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW };
    await store.chats.create(c, [{ appId, chatId: c.id, userId: c.createdBy, role: 'owner', joinedAt: NOW, readSeq: 0 }]);
    t.equal((await store.chats.get(appId, c.id))?.pins, undefined, 'a new chat has none');
    const pins = Array.from({ length: 50 }, (_, i) => ({ messageId: newMessageId(i + 1), pinnedBy: c.createdBy, pinnedAt: NOW }));
    await store.chats.update({ ...c, pins });
    t.same((await store.chats.get(appId, c.id))?.pins, pins, 'fifty pins, in order');
    await store.chats.update(c);
    t.equal((await store.chats.get(appId, c.id))?.pins, undefined, 'an update without them clears them');
  });

  withStore('mentions: indexed with their message, counted between two seqs newest first, dropped by its tombstone, per member and chat', async (t, store) => {
    const appId = randomUUID();
    const c: Chat = { appId, id: randomUUID(), kind: 'group', name: 'g', createdBy: randomUUID(), createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW };
    const [ann, ben] = [randomUUID(), randomUUID()];
    // Seqs 1…1100 (across the first two blocks of 1024): ann is mentioned in every 100th, ben in 1050.
    const all: StoredMessage[] = Array.from({ length: 1100 }, (_, i) => {
      const seq = i + 1;
      const mentions = [...(seq % 100 === 0 ? [ann] : []), ...(seq === 1050 ? [ben, ann] : [])];
      return { appId, chatId: c.id, id: newMessageId(seq), seq, senderId: c.createdBy, content: `m${seq}`, createdAt: NOW, reactions: [], rev: seq, ...(mentions.length ? { mentions } : {}) };
    });
    for (let i = 0; i < all.length; i += 256) {
      const batch = all.slice(i, i + 256);
      await store.messages.put(batch, { from: { seq: i, rev: i }, to: { seq: i + batch.length, rev: i + batch.length } });
    }
    t.same(await store.messages.mentionsBetween(appId, c.id, ann, 0, 1100, 99), [1100, 1050, 1000, 900, 800, 700, 600, 500, 400, 300, 200, 100], "ann's, newest first, across blocks");
    t.same(await store.messages.mentionsBetween(appId, c.id, ann, 900, 1100, 99), [1100, 1050, 1000], 'only after the first seq');
    t.same(await store.messages.mentionsBetween(appId, c.id, ann, 0, 1049, 2), [1000, 900], 'up to the last seq, at most the limit');
    t.same(await store.messages.mentionsBetween(appId, c.id, ben, 0, 1100, 99), [1050], "ben's own");
    t.same(await store.messages.mentionsBetween(appId, randomUUID(), ann, 0, 1100, 99), [], 'another chat has none');
    t.same(await store.messages.mentionsBetween(randomUUID(), c.id, ann, 0, 1100, 99), [], 'nor another application');
    const m1050 = all[1049]!;
    await store.messages.put([{ ...m1050, content: '', deletedAt: LATER, rev: 1101 }], { from: { seq: 1100, rev: 1100 }, to: { seq: 1100, rev: 1101 } });
    t.same(await store.messages.mentionsBetween(appId, c.id, ben, 0, 1100, 99), [], 'a deleted message mentions nobody any more');
    t.same(await store.messages.mentionsBetween(appId, c.id, ann, 1000, 1100, 99), [1100], 'for every member it named');
    await store.writers.release(appId, c.id);
  });
}
