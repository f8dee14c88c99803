import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { v7 as uuidv7 } from 'uuid';
import type { ModerationAction, NodeStore, UserBan } from '../../node/store/index.ts';
import { FAR, LATER, NOW } from '../helpers/fixed-clock.ts';

/** The ModerationStore part of the node store conformance suite (see store-conformance.ts). */
export function moderationConformance(withStore: (title: string, body: (t: Test, store: NodeStore) => Promise<void>) => void): void {
  const ban = (appId: string, userId: string, extra: Partial<UserBan> = {}): UserBan => ({ appId, userId, createdAt: NOW, by: 'apiKey:k1', ...extra });
  const action = (appId: string, userId: string, kind: ModerationAction['action'], extra: Partial<ModerationAction> = {}): ModerationAction => ({ appId, id: uuidv7(), at: NOW, action: kind, userId, by: 'apiKey:k1', ...extra });

  withStore('moderation: a ban is in force until lifted or expired, per application, and listed by user id', async (t, store) => {
    const [appA, appB] = [randomUUID(), randomUUID()];
    const users = Array.from({ length: 5 }, () => randomUUID()).sort();
    for (const u of users) await store.moderation.ban(ban(appA, u, { reason: `spam ${u}` }), action(appA, u, 'user.banned'));
    t.same(await store.moderation.banOf(appA, users[0]!, NOW), ban(appA, users[0]!, { reason: `spam ${users[0]}` }), 'every field read back');
    t.equal(await store.moderation.banOf(appB, users[0]!, NOW), undefined, "another application's user is not banned");
    t.same((await store.moderation.bans(appA, NOW, undefined, 3)).map((b) => b.userId), users.slice(0, 3), 'listed by user id, at most the limit');
    t.same((await store.moderation.bans(appA, NOW, users[2], 10)).map((b) => b.userId), users.slice(3), 'after a user id');
    await store.moderation.ban(ban(appA, users[0]!, { reason: 'again', expiresAt: FAR }), action(appA, users[0]!, 'user.banned'));
    t.same((await store.moderation.banOf(appA, users[0]!, NOW))?.reason, 'again', 'a new ban replaces the one in force');
    t.equal(await store.moderation.unban(appA, users[1]!, action(appA, users[1]!, 'user.unbanned'), NOW), 'unbanned');
    t.equal(await store.moderation.banOf(appA, users[1]!, NOW), undefined, 'lifted');
    t.equal(await store.moderation.unban(appA, users[1]!, action(appA, users[1]!, 'user.unbanned'), NOW), 'not-banned', 'nothing to lift twice');
    t.equal((await store.moderation.bans(appA, NOW, undefined, 10)).length, 4);
  });

  withStore('moderation: a timed ban lifts by itself at its expiry', async (t, store) => {
    const appId = randomUUID();
    const [timed, open] = [randomUUID(), randomUUID()];
    await store.moderation.ban(ban(appId, timed, { expiresAt: LATER }), action(appId, timed, 'user.banned', { expiresAt: LATER }));
    await store.moderation.ban(ban(appId, open), action(appId, open, 'user.banned'));
    t.ok(await store.moderation.banOf(appId, timed, NOW), 'in force before its expiry');
    t.equal(await store.moderation.banOf(appId, timed, LATER), undefined, 'not at its expiry');
    t.same((await store.moderation.bans(appId, FAR, undefined, 10)).map((b) => b.userId), [open], 'not listed once expired');
    t.equal(await store.moderation.unban(appId, timed, action(appId, timed, 'user.unbanned'), FAR), 'not-banned', 'an expired ban has nothing to lift');
    const late = randomUUID();
    await store.moderation.ban(ban(appId, late, { expiresAt: '2199-01-01T00:00:00.000Z' }), action(appId, late, 'user.banned'));
    t.ok(await store.moderation.banOf(appId, late, FAR), 'a ban lifting in more than 20 years is kept (past what a TTL can say)');
  });

  withStore('moderation: every action is recorded, listed newest first, paged', async (t, store) => {
    const appId = randomUUID();
    const made: ModerationAction[] = [];
    for (let i = 0; i < 5; i++) {
      const userId = randomUUID();
      const a = action(appId, userId, 'user.banned', { reason: `r${i}` });
      await store.moderation.ban(ban(appId, userId), a);
      made.push(a);
    }
    const lift = action(appId, made[0]!.userId!, 'user.unbanned');
    await store.moderation.unban(appId, made[0]!.userId!, lift, NOW);
    await store.moderation.unban(appId, randomUUID(), action(appId, randomUUID(), 'user.unbanned'), NOW);
    const all = await store.moderation.actions(appId, undefined, 100);
    t.same(all, [...made, lift].sort((a, b) => b.id.localeCompare(a.id)), 'newest first, every field; an unban of nobody recorded nothing');
    t.same((await store.moderation.actions(appId, all[1]!.id, 2)).map((a) => a.id), all.slice(2, 4).map((a) => a.id), 'older than a cursor, at most the limit');
    t.same(await store.moderation.actions(randomUUID(), undefined, 10), [], 'another application has none');
  });

  withStore('moderation: a user blocks others, once each, up to a limit; blocks are per blocker and listed by user id', async (t, store) => {
    const appId = randomUUID();
    const [me, other] = [randomUUID(), randomUUID()];
    const blocked = Array.from({ length: 3 }, () => randomUUID()).sort();
    for (const b of blocked) t.equal(await store.moderation.block(appId, me, b, NOW, 3), 'blocked');
    t.equal(await store.moderation.block(appId, me, blocked[0]!, LATER, 3), 'exists', 'blocking twice changes nothing');
    t.equal(await store.moderation.block(appId, me, randomUUID(), NOW, 3), 'full', 'past the limit');
    t.same(await store.moderation.blocks(appId, me, undefined, 10), blocked.map((userId) => ({ userId, blockedAt: NOW })), 'listed by user id, with the first time');
    t.same((await store.moderation.blocks(appId, me, blocked[0], 1)).map((b) => b.userId), [blocked[1]], 'after a user id, at most the limit');
    t.same(await store.moderation.blockOf(appId, me, blocked[1]!), { userId: blocked[1], blockedAt: NOW }, 'one block read by its pair');
    t.equal(await store.moderation.blockOf(appId, blocked[1]!, me), undefined, 'one way only');
    t.same(await store.moderation.blocks(appId, other, undefined, 10), [], "another user's blocks are its own");
    t.equal(await store.moderation.unblock(appId, me, blocked[1]!), 'unblocked');
    t.equal(await store.moderation.unblock(appId, me, blocked[1]!), 'not-blocked');
    t.equal(await store.moderation.blockOf(appId, me, blocked[1]!), undefined);
    t.equal(await store.moderation.block(appId, me, randomUUID(), NOW, 3), 'blocked', 'an unblock frees a place');
  });

  withStore('moderation: an application’s blocklist is read back as last set, per application', async (t, store) => {
    const [appA, appB] = [randomUUID(), randomUUID()];
    t.equal(await store.moderation.blocklist(appA), undefined, 'none until set');
    const list = { entries: [{ text: 'Spam', action: 'block' as const }, { text: 'darn it', action: 'mask' as const }], version: 'v1', updatedAt: NOW };
    await store.moderation.setBlocklist(appA, list);
    t.same(await store.moderation.blocklist(appA), list);
    await store.moderation.setBlocklist(appA, { entries: [], version: 'v2', updatedAt: LATER });
    t.same(await store.moderation.blocklist(appA), { entries: [], version: 'v2', updatedAt: LATER }, 'replaced');
    t.equal(await store.moderation.blocklist(appB), undefined, "another application's is its own");
  });
}
