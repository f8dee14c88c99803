import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { newMessageId, threadLogId, type InboxPosition, type NodeStore, type StoredMessage, type ThreadFollow } from '../../node/store/index.ts';
import { LATER, NOW } from '../helpers/fixed-clock.ts';

/** Thread follows (README, "Threads"): part of the node store conformance suite (see store-conformance.ts). */
export function threadConformance(withStore: (title: string, body: (t: Test, store: NodeStore) => Promise<void>) => void): void {
  withStore('thread follows: rows by user and by thread, touched only where they exist, forgotten whole, tenants apart', async (t, store) => {
    const appId = randomUUID();
    const [chatA, chatB, p1, p2, p3] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const [ann, ben, cat] = [randomUUID(), randomUUID(), randomUUID()];
    const row = (userId: string, chatId: string, parentId: string, following = true): ThreadFollow => ({ appId, userId, chatId, parentId, following, readSeq: 0, lastSeq: 1, activityAt: NOW });

    t.equal(await store.threads.get(appId, ann, chatA, p1), undefined, 'no row at first');
    await store.threads.put([row(ann, chatA, p1), row(ben, chatA, p1), row(cat, chatA, p1, false), row(ann, chatA, p2), row(ann, chatB, p3)]);
    t.same(await store.threads.get(appId, ann, chatA, p1), row(ann, chatA, p1), 'a row read back whole');
    t.same((await store.threads.followers(appId, chatA, p1)).sort(), [ann, ben].sort(), "a thread's followers: not who unfollowed");
    t.same(await store.threads.get(appId, cat, chatA, p1), row(cat, chatA, p1, false), 'an unfollow is a row too');
    const missing = randomUUID();
    t.same(
      await store.threads.getMany(appId, ann, [{ chatId: chatB, parentId: p3 }, { chatId: chatA, parentId: missing }, { chatId: chatA, parentId: p1 }]),
      [row(ann, chatB, p3), undefined, row(ann, chatA, p1)],
      'several rows of a user at once, in the order asked, none where there is none',
    );
    t.same(await store.threads.getMany(appId, ann, []), [], 'none asked: none read');
    t.same(await store.threads.getMany(randomUUID(), ann, [{ chatId: chatA, parentId: p1 }]), [undefined], "another application's rows: none");

    await store.threads.touch(appId, chatA, p1, [ann, ben, randomUUID()], 5, LATER, NOW);
    t.same(await store.threads.get(appId, ben, chatA, p1), { ...row(ben, chatA, p1), lastSeq: 5, activityAt: LATER }, 'touched: the newest reply and its time');
    t.equal(await store.threads.get(appId, cat, chatA, p1).then((r) => r?.lastSeq), 1, 'a row not named is not touched');
    t.same((await store.threads.threadsOf(appId, ann)).length, 3, 'a user with no row is not made one by a touch; ann has her three');

    await store.threads.put([{ ...row(ann, chatA, p1), readSeq: 4, lastSeq: 5, activityAt: LATER }]);
    t.equal((await store.threads.get(appId, ann, chatA, p1))?.readSeq, 4, 'a put replaces the row');
    const mine = await store.threads.threadsOf(appId, ann);
    t.same(mine.map((r) => [r.chatId, r.parentId]), [[chatA, p1], [chatA, p2], [chatB, p3]].sort((x, y) => (x[0]! + x[1]! < y[0]! + y[1]! ? -1 : 1)), "a user's rows by chat then parent");
    t.same((await store.threads.threadsOf(appId, ann, chatA)).map((r) => r.parentId).sort(), [p1, p2].sort(), 'or of one chat');

    await store.threads.forget(appId, ann, chatA, p1);
    t.equal(await store.threads.get(appId, ann, chatA, p1), undefined, 'forgotten');
    t.same(await store.threads.followers(appId, chatA, p1), [ben], 'and no longer a follower');
    await store.threads.forget(appId, ann, chatA, p1);
    t.pass('forgetting an absent row is nothing');
    t.same(await store.threads.threadsOf(randomUUID(), ann), [], "another application's rows are never read");
    t.same(await store.threads.followers(randomUUID(), chatA, p1), [], 'nor its followers');
  });

  withStore("a user's inbox indexes: followed threads by activity, paged in O(page), and the set of those with unread replies", async (t, store) => {
    const appId = randomUUID();
    const user = randomUUID();
    const chat = randomUUID();
    const at = (minute: number) => `2026-11-29T10:${String(minute).padStart(2, '0')}:00.000Z`;
    const parents: string[] = Array.from({ length: 5 }, () => randomUUID());
    const row = (i: number, extra: Partial<ThreadFollow> = {}): ThreadFollow => ({ appId, userId: user, chatId: chat, parentId: parents[i]!, following: true, readSeq: 1, lastSeq: 1, activityAt: at(i), ...extra });
    await store.threads.put(parents.map((_, i) => row(i)));
    const order = async (after?: InboxPosition, limit = 10) => (await store.threads.byActivity(appId, user, after, limit)).map((p) => parents.indexOf(p.parentId));
    t.same(await order(), [4, 3, 2, 1, 0], 'newest activity first');
    const [first, second] = await store.threads.byActivity(appId, user, undefined, 2);
    t.same(await order(second), [2, 1, 0], 'paged after a position, which is not repeated');
    t.same(await order(first, 1), [3], 'one at a time');
    t.same(await store.threads.unread(appId, user), [], 'nothing unread yet');

    await store.threads.touch(appId, chat, parents[1]!, [user], 2, at(30), at(1));
    t.same(await order(), [1, 4, 3, 2, 0], 'a reply moves its thread to the top, once');
    t.same(await store.threads.unread(appId, user), [{ chatId: chat, parentId: parents[1] }], 'and into the unread set');
    await store.threads.put([row(1, { readSeq: 2, lastSeq: 2, activityAt: at(30) })]);
    t.same(await store.threads.unread(appId, user), [], 'read: out of the unread set');
    await store.threads.put([row(2, { following: false })]);
    t.same(await order(), [1, 4, 3, 0], 'an unfollowed thread leaves the index');
    await store.threads.put([row(2, { activityAt: at(40), lastSeq: 3 })]);
    t.same([await order(), (await store.threads.unread(appId, user)).map((k) => parents.indexOf(k.parentId))], [[2, 1, 4, 3, 0], [2]], 'followed again at its activity now, unread');
    await store.threads.forget(appId, user, chat, parents[2]!);
    t.same([await order(), await store.threads.unread(appId, user)], [[1, 4, 3, 0], []], 'forgotten: out of both');
    t.same(await store.threads.byActivity(randomUUID(), user, undefined, 10), [], "another application's index is never read");
  });
}

/** A thread's log, written without a fence by its chat's actor: paged, and read by revision for a replay. */
export function threadLogConformance(withStore: (title: string, body: (t: Test, store: NodeStore) => Promise<void>) => void): void {
  withStore("a thread's log written without a fence reports its replies created and changed since a revision", async (t, store) => {
    const appId = randomUUID();
    const log = threadLogId(randomUUID(), randomUUID());
    const reply = (seq: number, rev: number): StoredMessage => ({ appId, chatId: log, id: newMessageId(1, Date.parse(NOW) + seq), seq, senderId: randomUUID(), content: `r${seq}`, createdAt: NOW, reactions: [], parentId: randomUUID(), rev });
    // Revisions are the chat's: a thread's replies take some of them, not all.
    for (const [seq, rev] of [[1, 3], [2, 5], [3, 9]] as const) await store.messages.put([reply(seq, rev)]);
    t.same((await store.messages.changedSince(appId, log, 0, 10)).map((m) => m.seq), [1, 2, 3], 'all of them since revision 0');
    t.same((await store.messages.changedSince(appId, log, 5, 10)).map((m) => m.seq), [3], 'the newer ones since a later revision');
    const [first] = await store.messages.afterSeq(appId, log, 0, 1);
    await store.messages.put([{ ...first!, content: 'edited', editedAt: LATER, rev: 12 }]);
    t.same((await store.messages.changedSince(appId, log, 9, 10)).map((m) => [m.seq, m.content]), [[1, 'edited']], 'an edit later moves the reply to its new revision');
    t.same((await store.messages.changedSince(appId, log, 12, 10)), [], 'and nothing is newer than the newest');
    t.same((await store.messages.pageBackward(appId, log, undefined, 10)).map((m) => m.seq), [3, 2, 1], 'paged newest first');
  });
}
