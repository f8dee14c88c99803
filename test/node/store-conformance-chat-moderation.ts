import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { v7 as uuidv7 } from 'uuid';
import type { Chat, ChatBan, MessageFlag, ModerationAction, NodeStore } from '../../node/store/index.ts';
import { FAR, LATER, NOW } from '../helpers/fixed-clock.ts';

/** Mutes, chat bans and flags: part of the node store conformance suite (see store-conformance.ts). */
export function chatModerationConformance(withStore: (title: string, body: (t: Test, store: NodeStore) => Promise<void>) => void): void {
  const chatBan = (appId: string, chatId: string, userId: string, extra: Partial<ChatBan> = {}): ChatBan => ({ appId, chatId, userId, createdAt: NOW, by: 'user:owner', ...extra });
  const action = (appId: string, chatId: string, userId: string, kind: ModerationAction['action']): ModerationAction => ({ appId, id: uuidv7(), at: NOW, action: kind, userId, chatId, by: 'user:owner' });
  const group = (appId: string): Chat => ({ appId, id: randomUUID(), kind: 'group', name: 'g', createdBy: randomUUID(), createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW });

  withStore('chat moderation: a member’s mute is written and read with it, and cleared by a write without one', async (t, store) => {
    const c = group(randomUUID());
    const userId = randomUUID();
    await store.chats.create(c, [{ appId: c.appId, chatId: c.id, userId: c.createdBy, role: 'owner', joinedAt: NOW, readSeq: 0 }, { appId: c.appId, chatId: c.id, userId, role: 'member', joinedAt: NOW, readSeq: 0 }]);
    const plain = (await store.chats.member(c.appId, c.id, userId))!;
    t.notOk('mute' in plain, 'a new member is not muted');
    const mute = { until: LATER, by: 'apiKey:k1', at: NOW };
    await store.chats.putMember({ ...plain, mute });
    t.same((await store.chats.member(c.appId, c.id, userId))?.mute, mute, 'read back by member()');
    t.same((await store.chats.members(c.appId, c.id)).find((m) => m.userId === userId)?.mute, mute, 'and by members()');
    t.equal(await store.chats.markRead(c.appId, c.id, userId, 0), 0);
    await store.chats.putMember({ ...plain, mute: { by: 'user:x', at: NOW } });
    t.same((await store.chats.member(c.appId, c.id, userId))?.mute, { by: 'user:x', at: NOW }, 'replaced; no expiry is kept as none');
    await store.chats.putMember(plain);
    t.notOk('mute' in (await store.chats.member(c.appId, c.id, userId))!, 'lifted by a write without one');
  });

  withStore('chat moderation: a chat ban is in force until lifted or expired, per chat, listed by user id, and recorded', async (t, store) => {
    const appId = randomUUID();
    const [chatA, chatB] = [randomUUID(), randomUUID()];
    const users = Array.from({ length: 4 }, () => randomUUID()).sort();
    for (const u of users) await store.moderation.chatBan(chatBan(appId, chatA, u, { reason: `r ${u}` }), action(appId, chatA, u, 'member.banned'));
    t.same(await store.moderation.chatBanOf(appId, chatA, users[0]!, NOW), chatBan(appId, chatA, users[0]!, { reason: `r ${users[0]}` }), 'every field read back');
    t.equal(await store.moderation.chatBanOf(appId, chatB, users[0]!, NOW), undefined, 'another chat');
    t.equal(await store.moderation.chatBanOf(randomUUID(), chatA, users[0]!, NOW), undefined, 'another application');
    t.same((await store.moderation.chatBans(appId, chatA, NOW, undefined, 2)).map((b) => b.userId), users.slice(0, 2), 'by user id, at most the limit');
    t.same((await store.moderation.chatBans(appId, chatA, NOW, users[1], 10)).map((b) => b.userId), users.slice(2), 'after a user id');
    t.equal(await store.moderation.liftChatBan(appId, chatA, users[0]!, action(appId, chatA, users[0]!, 'member.unbanned'), NOW), 'lifted');
    t.equal(await store.moderation.liftChatBan(appId, chatA, users[0]!, action(appId, chatA, users[0]!, 'member.unbanned'), NOW), 'not-banned', 'nothing to lift twice');
    const timed = randomUUID();
    await store.moderation.chatBan(chatBan(appId, chatA, timed, { expiresAt: LATER }), action(appId, chatA, timed, 'member.banned'));
    t.ok(await store.moderation.chatBanOf(appId, chatA, timed, NOW), 'in force before its expiry');
    t.equal(await store.moderation.chatBanOf(appId, chatA, timed, LATER), undefined, 'not at its expiry');
    t.notOk((await store.moderation.chatBans(appId, chatA, FAR, undefined, 10)).some((b) => b.userId === timed), 'not listed once expired');
    const log = await store.moderation.actions(appId, undefined, 2);
    t.match(log, [{ action: 'member.banned', userId: timed, chatId: chatA }, { action: 'member.unbanned', userId: users[0], chatId: chatA }], 'recorded with their chat');
  });

  withStore('flags: once per user per message, the open queue newest first, a review closes every open flag of the message', async (t, store) => {
    const appId = randomUUID();
    const [chatId, messageId, other] = [randomUUID(), randomUUID(), randomUUID()];
    const flag = (by: string, message = messageId): MessageFlag => ({ appId, id: uuidv7(), chatId, messageId: message, senderId: 'author', flaggedBy: by, reason: `by ${by}`, createdAt: NOW });
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const fa = flag(a);
    t.same(await store.flags.flag(fa), { result: 'flagged', open: 1 });
    t.same(await store.flags.flag(flag(a)), { result: 'exists', open: 1 }, 'a user flags a message once');
    const fb = flag(b);
    t.same(await store.flags.flag(fb), { result: 'flagged', open: 2 }, 'distinct flaggers counted');
    const fo = flag(a, other);
    t.same(await store.flags.flag(fo), { result: 'flagged', open: 1 }, 'per message');
    t.same(await store.flags.get(appId, fa.id), fa, 'every field read back');
    t.equal(await store.flags.get(randomUUID(), fa.id), undefined, 'another application');
    t.same((await store.flags.open(appId, undefined, 2)).map((f) => f.id), [fo.id, fb.id], 'newest first, at most the limit');
    t.same((await store.flags.open(appId, fb.id, 10)).map((f) => f.id), [fa.id], 'older than a cursor');
    t.same((await store.flags.resolve(appId, chatId, messageId, fa.id)).map((f) => f.id), [fb.id, fa.id], 'the review closes both flags of the message');
    t.same((await store.flags.open(appId, undefined, 10)).map((f) => f.id), [fo.id], 'only the other message’s flag is open');
    t.equal(await store.flags.get(appId, fa.id), undefined, 'a closed flag is not found');
    t.same(await store.flags.resolve(appId, chatId, messageId, fa.id), [], 'resolving again closes nothing');
    t.same(await store.flags.flag(flag(b)), { result: 'exists', open: 0 }, 'a reviewed flag still counts as the user’s one flag');
    t.same(await store.flags.flag(flag(c)), { result: 'flagged', open: 1 }, 'a new flagger starts a new review');
  });

  withStore('flags: the hide threshold is 0 until set, per application', async (t, store) => {
    const [appA, appB] = [randomUUID(), randomUUID()];
    t.equal(await store.flags.hideThreshold(appA), 0);
    await store.flags.setHideThreshold(appA, 3);
    t.equal(await store.flags.hideThreshold(appA), 3);
    t.equal(await store.flags.hideThreshold(appB), 0, 'another application');
    await store.flags.setHideThreshold(appA, 0);
    t.equal(await store.flags.hideThreshold(appA), 0, 'turned off again');
  });
}
