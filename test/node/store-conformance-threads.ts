import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { NodeStore, ThreadFollow } from '../../node/store/index.ts';
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
