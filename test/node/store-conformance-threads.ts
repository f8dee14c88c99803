import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { newMessageId, threadLogId, type NodeStore, type StoredMessage, type ThreadFollow } from '../../node/store/index.ts';
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

    await store.threads.touch(appId, chatA, p1, [ann, ben, randomUUID()], 5, LATER);
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
