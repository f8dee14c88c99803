import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { v7 as uuidv7 } from 'uuid';
import { generateSigningKey } from '../../common/jwt/index.ts';
import { BUCKET_MS, FencedError, newMessageId, type Chat, type ChatHead, type ChatUser, type Member, type NodeStore, type StoredMessage, type UserRefreshToken, type UserSessionFamily } from '../../node/store/index.ts';
import { T0, at, NOW, LATER, FAR, PAST } from '../helpers/fixed-clock.ts';
import { changeEventsConformance } from './store-conformance-change-events.ts';
import { moderationConformance } from './store-conformance-moderation.ts';
import { chatModerationConformance } from './store-conformance-chat-moderation.ts';
import { conversationConformance } from './store-conformance-conversation.ts';
import { threadConformance, threadLogConformance } from './store-conformance-threads.ts';
import { searchConformance } from './store-conformance-search.ts';
import { pushConformance } from './store-conformance-push.ts';
import { outboxConformance } from './store-conformance-outbox.ts';

/**
 * The behaviour every NodeStore implementation must show, written once against the interfaces in
 * node/store/types.ts. Each subtest opens its own store from `open` and cleans it up, so the
 * embedded store and the Cassandra one run the same suite unchanged.
 */

export interface OpenedNodeStore {
  store: NodeStore;
  /** Another instance over the same data: a second writer, as another node of a cluster would be. */
  another: () => Promise<NodeStore>;
  cleanup: () => Promise<void>;
}


const hash = () => randomUUID().replaceAll('-', '') + randomUUID().replaceAll('-', '');

function user(appId: string, overrides: Partial<ChatUser> = {}): ChatUser {
  return { appId, id: randomUUID(), username: `u-${randomUUID()}`, displayName: 'User', createdAt: NOW, updatedAt: NOW, ...overrides };
}

function chat(appId: string, overrides: Partial<Chat> = {}): Chat {
  return { appId, id: randomUUID(), kind: 'group', name: 'Group', createdBy: randomUUID(), createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW, ...overrides };
}

function member(c: Chat, userId: string, overrides: Partial<Member> = {}): Member {
  return { appId: c.appId, chatId: c.id, userId, role: 'member', joinedAt: NOW, readSeq: 0, ...overrides };
}

/** `count` messages of one chat with seqs from `firstSeq`, ids time-ordered at `msAt(i)`. */
function messages(c: Chat, count: number, msAt: (i: number) => number, firstSeq = 1): StoredMessage[] {
  return Array.from({ length: count }, (_, i) => ({
    appId: c.appId,
    chatId: c.id,
    id: uuidv7({ msecs: msAt(i), seq: i }),
    seq: firstSeq + i,
    senderId: c.createdBy,
    content: `m${firstSeq + i}`,
    createdAt: new Date(msAt(i)).toISOString(),
    reactions: [],
  }));
}

/** Pages backward from the newest to the oldest and returns the seqs in the order received. */
async function walkBackward(store: NodeStore, c: Chat, size: number): Promise<number[]> {
  const seqs: number[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await store.messages.pageBackward(c.appId, c.id, cursor, size);
    seqs.push(...page.map((m) => m.seq));
    if (page.length < size) return seqs;
    cursor = page.at(-1)!.id;
  }
  throw new Error('paging did not end');
}

export function nodeStoreConformance(t: Test, name: string, open: () => Promise<OpenedNodeStore>): void {
  const withStore = (title: string, body: (t: Test, store: NodeStore) => Promise<void>) =>
    t.test(`${name}: ${title}`, async (t) => {
      const { store, cleanup } = await open();
      t.teardown(cleanup);
      await body(t, store);
    });

  withStore('users: usernames are unique per application, and tenancy is in every lookup', async (t, store) => {
    const [appA, appB] = [randomUUID(), randomUUID()];
    const alice = user(appA, { username: 'alice' });
    t.equal(await store.users.create(alice), 'created');
    t.equal(await store.users.create(user(appA, { username: 'alice' })), 'exists', 'same username, same app');
    t.equal(await store.users.create(user(appB, { username: 'alice' })), 'created', 'same username, another app');
    t.same(await store.users.get(appA, alice.id), alice);
    t.same(await store.users.getByUsername(appA, 'alice'), alice);
    t.equal(await store.users.get(appB, alice.id), undefined, "another app's user is not found");
    t.equal(await store.users.get(appA, randomUUID()), undefined);
  });

  withStore('users: concurrent creates of one username store exactly one user', async (t, store) => {
    const appId = randomUUID();
    const results = await Promise.all(Array.from({ length: 10 }, () => store.users.create(user(appId, { username: 'race' }))));
    t.equal(results.filter((r) => r === 'created').length, 1);
    t.equal(results.filter((r) => r === 'exists').length, 9);
  });

  withStore('users: update and delete; a deleted username is free again', async (t, store) => {
    const appId = randomUUID();
    const bob = user(appId, { username: 'bob' });
    await store.users.create(bob);
    const renamed = { ...bob, displayName: 'Robert', updatedAt: LATER };
    t.equal(await store.users.update(renamed), 'updated');
    t.same(await store.users.get(appId, bob.id), renamed);
    t.equal(await store.users.update({ ...renamed, appId: randomUUID() }), 'not-found', 'update in another app');
    t.equal(await store.users.update(user(appId)), 'not-found');
    t.equal(await store.users.delete(appId, bob.id), 'deleted');
    t.equal(await store.users.delete(appId, bob.id), 'not-found');
    t.equal(await store.users.get(appId, bob.id), undefined);
    t.equal(await store.users.getByUsername(appId, 'bob'), undefined);
    t.equal(await store.users.create(user(appId, { username: 'bob' })), 'created', 'the username is free');
  });

  withStore('user sessions: rotation, reuse revokes the family, expiry, tenancy', async (t, store) => {
    const appId = randomUUID();
    const userId = randomUUID();
    const family: UserSessionFamily = { appId, id: randomUUID(), userId, expiresAt: FAR };
    const first: UserRefreshToken = { appId, hash: hash(), familyId: family.id, userId, expiresAt: FAR };
    await store.userSessions.createFamily(family, first);
    t.same(await store.userSessions.getFamily(appId, family.id), family);
    t.equal(await store.userSessions.getFamily(randomUUID(), family.id), undefined, "another app's family is not found");

    t.same(await store.userSessions.rotate(randomUUID(), first.hash, hash(), NOW), { kind: 'invalid' }, 'a token of another app is invalid');
    const second = hash();
    t.same(await store.userSessions.rotate(appId, first.hash, second, NOW), { kind: 'rotated', userId, familyId: family.id });
    const third = hash();
    t.same(await store.userSessions.rotate(appId, second, third, NOW), { kind: 'rotated', userId, familyId: family.id }, 'the next token rotates');
    t.same(await store.userSessions.rotate(appId, first.hash, hash(), LATER), { kind: 'reused', familyId: family.id }, 'presenting a used token is reuse');
    t.ok((await store.userSessions.getFamily(appId, family.id))?.revokedAt, 'the family is revoked');
    t.same(await store.userSessions.rotate(appId, third, hash(), LATER), { kind: 'invalid' }, 'the live token of a revoked family is refused');
    t.same(await store.userSessions.rotate(appId, hash(), hash(), NOW), { kind: 'invalid' }, 'an unknown token is invalid');

    const old: UserSessionFamily = { appId, id: randomUUID(), userId, expiresAt: PAST };
    const expired: UserRefreshToken = { appId, hash: hash(), familyId: old.id, userId, expiresAt: PAST };
    await store.userSessions.createFamily(old, expired);
    t.same(await store.userSessions.rotate(appId, expired.hash, hash(), NOW), { kind: 'invalid' }, 'an expired token is invalid');
  });

  withStore('user sessions: expired sign-ins are forgotten (sweepExpired, or the store expires them itself)', async (t, store) => {
    const appId = randomUUID();
    const userId = randomUUID();
    const soon = new Date(Date.now() + 1500).toISOString();
    const brief: UserSessionFamily = { appId, id: randomUUID(), userId, expiresAt: soon };
    const briefToken: UserRefreshToken = { appId, hash: hash(), familyId: brief.id, userId, expiresAt: soon };
    const lasting: UserSessionFamily = { appId, id: randomUUID(), userId, expiresAt: FAR };
    await store.userSessions.createFamily(brief, briefToken);
    await store.userSessions.createFamily(lasting, { appId, hash: hash(), familyId: lasting.id, userId, expiresAt: FAR });
    t.same(await store.userSessions.getFamily(appId, brief.id), brief, 'there while it can be used');
    await new Promise((resolve) => setTimeout(resolve, 2600));
    const removed = await store.userSessions.sweepExpired(new Date().toISOString());
    t.ok(removed >= 0, `swept (${removed} records removed here)`);
    t.equal(await store.userSessions.getFamily(appId, brief.id), undefined, 'the expired family is gone');
    t.same(await store.userSessions.rotate(appId, briefToken.hash, hash(), new Date().toISOString()), { kind: 'invalid' }, 'its token is gone too');
    t.same(await store.userSessions.getFamily(appId, lasting.id), lasting, 'a live family stays');
  });

  withStore('user sessions: concurrent rotations of one token yield one rotation', async (t, store) => {
    const appId = randomUUID();
    const userId = randomUUID();
    const family: UserSessionFamily = { appId, id: randomUUID(), userId, expiresAt: FAR };
    const first: UserRefreshToken = { appId, hash: hash(), familyId: family.id, userId, expiresAt: FAR };
    await store.userSessions.createFamily(family, first);
    const results = await Promise.all(Array.from({ length: 8 }, () => store.userSessions.rotate(appId, first.hash, hash(), NOW)));
    const count = (kind: string) => results.filter((r) => r.kind === kind).length;
    t.equal(count('rotated'), 1, 'exactly one caller rotates');
    t.equal(count('reused'), 1, 'the next one is reuse, which revokes the family');
    t.equal(count('invalid'), 6, 'the rest find the family revoked');
  });

  withStore('user sessions: revoking all of a user ends every family of that user only', async (t, store) => {
    const appId = randomUUID();
    const [userId, otherId] = [randomUUID(), randomUUID()];
    const tokens: UserRefreshToken[] = [];
    for (const owner of [userId, userId, otherId]) {
      const family: UserSessionFamily = { appId, id: randomUUID(), userId: owner, expiresAt: FAR };
      const token: UserRefreshToken = { appId, hash: hash(), familyId: family.id, userId: owner, expiresAt: FAR };
      await store.userSessions.createFamily(family, token);
      tokens.push(token);
    }
    await store.userSessions.revokeAllForUser(appId, userId, NOW);
    t.same(await store.userSessions.rotate(appId, tokens[0]!.hash, hash(), NOW), { kind: 'invalid' });
    t.same(await store.userSessions.rotate(appId, tokens[1]!.hash, hash(), NOW), { kind: 'invalid' });
    t.equal((await store.userSessions.rotate(appId, tokens[2]!.hash, hash(), NOW)).kind, 'rotated', "another user's session lives on");
  });

  withStore('chats: create with members, read back by chat and by user, tenancy', async (t, store) => {
    const appId = randomUUID();
    const c = chat(appId);
    const [u1, u2] = [randomUUID(), randomUUID()];
    const members = [member(c, u1, { role: 'owner' }), member(c, u2)];
    await store.chats.create(c, members);
    t.same(await store.chats.get(appId, c.id), c);
    t.same(
      (await store.chats.members(appId, c.id)).sort((a, b) => a.userId.localeCompare(b.userId)),
      [...members].sort((a, b) => a.userId.localeCompare(b.userId)),
    );
    t.same(await store.chats.member(appId, c.id, u1), members[0]);
    t.equal(await store.chats.member(appId, c.id, randomUUID()), undefined);
    t.same(await store.chats.chatsOf(appId, u2), [c.id]);
    const other = randomUUID();
    t.equal(await store.chats.get(other, c.id), undefined, "another app's chat is not found");
    t.same(await store.chats.members(other, c.id), []);
    t.same(await store.chats.chatsOf(other, u2), []);
    t.equal(await store.chats.member(other, c.id, u1), undefined);
  });

  withStore('chats: the member count is written and read with the row (create, update, activity); a row without one reads without', async (t, store) => {
    const appId = randomUUID();
    const counted = chat(appId, { memberCount: 3 });
    await store.chats.create(counted, [member(counted, counted.createdBy, { role: 'owner' })]);
    t.equal((await store.chats.get(appId, counted.id))?.memberCount, 3, 'as created');
    t.equal(await store.chats.update({ ...counted, memberCount: 4, updatedAt: LATER }), 'updated');
    t.equal((await store.chats.get(appId, counted.id))?.memberCount, 4, 'as updated');
    t.equal(await store.chats.writeActivity({ ...counted, memberCount: 5, updatedAt: LATER, lastSeq: 1, lastActivityAt: LATER }, [counted.createdBy]), 'updated');
    t.equal((await store.chats.get(appId, counted.id))?.memberCount, 5, 'as its activity wrote it');
    const older = chat(appId);
    await store.chats.create(older, [member(older, older.createdBy, { role: 'owner' })]);
    t.notOk('memberCount' in (await store.chats.get(appId, older.id))!, 'a row written without one');
  });

  withStore('chats: one direct chat per unordered pair, even under concurrent creates', async (t, store) => {
    const appId = randomUUID();
    const [a, b] = [randomUUID(), randomUUID()];
    const attempt = (first: string, second: string) => {
      const c = chat(appId, { kind: 'direct', name: undefined, createdBy: first });
      delete c.name;
      return store.chats.ensureDirect(c, [member(c, first), member(c, second)]);
    };
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? attempt(a, b) : attempt(b, a))));
    t.equal(results.filter((r) => r.created).length, 1, 'created once');
    t.equal(new Set(results.map((r) => r.chat.id)).size, 1, 'every caller gets the same chat');
    const id = results[0]!.chat.id;
    t.same((await store.chats.members(appId, id)).map((m) => m.userId).sort(), [a, b].sort());
    t.same(await store.chats.chatsOf(appId, a), [id]);
    const elsewhere = await (async () => {
      const c = chat(randomUUID(), { kind: 'direct' });
      return store.chats.ensureDirect(c, [member(c, a), member(c, b)]);
    })();
    t.ok(elsewhere.created, 'the same pair in another app is another chat');

    t.equal(await store.chats.delete(appId, id), 'deleted');
    const again = await attempt(a, b);
    t.ok(again.created, 'after deleting it, the pair can have a new direct chat');
    t.not(again.chat.id, id);
  });

  withStore('chats: update and delete; delete removes members and membership index', async (t, store) => {
    const appId = randomUUID();
    const c = chat(appId);
    const u = randomUUID();
    await store.chats.create(c, [member(c, u, { role: 'owner' })]);
    const renamed = { ...c, name: 'Renamed', updatedAt: LATER, lastSeq: 7, lastActivityAt: LATER };
    t.equal(await store.chats.update(renamed), 'updated');
    t.same(await store.chats.get(appId, c.id), renamed);
    t.equal(await store.chats.update({ ...renamed, appId: randomUUID() }), 'not-found', 'update in another app');
    t.equal(await store.chats.update(chat(appId)), 'not-found');
    t.equal(await store.chats.delete(randomUUID(), c.id), 'not-found', 'delete in another app');
    t.equal(await store.chats.delete(appId, c.id), 'deleted');
    t.equal(await store.chats.delete(appId, c.id), 'not-found');
    t.equal(await store.chats.get(appId, c.id), undefined);
    t.same(await store.chats.members(appId, c.id), []);
    t.same(await store.chats.chatsOf(appId, u), []);
  });

  withStore('chats: putMember upserts keeping joinedAt and never lowering readSeq; removeMember', async (t, store) => {
    const appId = randomUUID();
    const c = chat(appId);
    const [owner, u] = [randomUUID(), randomUUID()];
    await store.chats.create(c, [member(c, owner, { role: 'owner' })]);
    await store.chats.putMember(member(c, u, { joinedAt: NOW, readSeq: 5 }));
    t.same(await store.chats.chatsOf(appId, u), [c.id], 'an added member is indexed under the user');
    await store.chats.putMember(member(c, u, { role: 'admin', joinedAt: LATER, readSeq: 2 }));
    t.same(await store.chats.member(appId, c.id, u), member(c, u, { role: 'admin', joinedAt: NOW, readSeq: 5 }), 'role changed; joinedAt and readSeq kept');
    await store.chats.putMember(member(c, u, { role: 'admin', readSeq: 9 }));
    t.equal((await store.chats.member(appId, c.id, u))?.readSeq, 9, 'readSeq raised');
    t.equal(await store.chats.removeMember(appId, c.id, u), 'removed');
    t.equal(await store.chats.removeMember(appId, c.id, u), 'not-found');
    t.equal(await store.chats.member(appId, c.id, u), undefined);
    t.same(await store.chats.chatsOf(appId, u), []);
    t.same((await store.chats.members(appId, c.id)).map((m) => m.userId), [owner]);
  });

  withStore("chats: a user's chats by activity, newest first, paged, moved by writeActivity, and counted", async (t, store) => {
    const appId = randomUUID();
    const [u, other, outsider] = [randomUUID(), randomUUID(), randomUUID()];
    const chats = [1, 2, 3, 4, 5].map((i) => chat(appId, { createdAt: at(i), updatedAt: at(i), lastActivityAt: at(i) }));
    for (const c of chats) await store.chats.create(c, [member(c, u, { role: 'owner' }), member(c, other)]);
    const ids = (page: { chatId: string }[]) => page.map((e) => e.chatId);
    const [c1, c2, c3, c4, c5] = chats as [Chat, Chat, Chat, Chat, Chat];
    const first = await store.chats.chatsByActivity(appId, u, undefined, 2);
    t.same(first, [{ at: at(5), chatId: c5.id }, { at: at(4), chatId: c4.id }], 'newest first, with the time each is indexed at');
    t.same(ids(await store.chats.chatsByActivity(appId, u, first[1], 2)), [c3.id, c2.id], 'the next page starts after the position given');
    t.same(ids(await store.chats.chatsByActivity(appId, u, { at: at(2), chatId: c2.id }, 2)), [c1.id]);
    t.same(await store.chats.chatsByActivity(appId, u, { at: at(1), chatId: c1.id }, 2), []);
    t.same(await store.chats.chatsByActivity(randomUUID(), u, undefined, 10), [], "another app's index is another partition");
    t.same(await store.chats.chatCounts(appId, [u, outsider]), new Map([[u, 5], [outsider, 0]]));

    const moved = { ...c2, lastSeq: 3, lastActivityAt: at(10) };
    t.equal(await store.chats.writeActivity(moved, [u, other, outsider], c2.lastActivityAt), 'updated');
    t.same(await store.chats.get(appId, c2.id), moved, 'the row is written too');
    t.same(ids(await store.chats.chatsByActivity(appId, u, undefined, 10)), [c2.id, c5.id, c4.id, c3.id, c1.id], 'moved to its new time, listed once');
    t.same(ids(await store.chats.chatsByActivity(appId, other, undefined, 1)), [c2.id], 'for every member named');
    t.same(await store.chats.chatsByActivity(appId, outsider, undefined, 10), [], 'a non-member named is skipped');
    t.same(await store.chats.chatsOf(appId, outsider), []);

    t.equal(await store.chats.removeMember(appId, c3.id, u), 'removed');
    t.equal(await store.chats.writeActivity({ ...c3, lastActivityAt: at(20) }, [u, other], c3.lastActivityAt), 'updated');
    t.same(ids(await store.chats.chatsByActivity(appId, u, undefined, 10)), [c2.id, c5.id, c4.id, c1.id], 'a move naming a removed member does not bring the chat back');
    t.notOk((await store.chats.chatsOf(appId, u)).includes(c3.id));
    t.equal(await store.chats.delete(appId, c5.id), 'deleted');
    t.same(ids(await store.chats.chatsByActivity(appId, u, undefined, 10)), [c2.id, c4.id, c1.id], 'a deleted chat leaves the index');
    t.equal(await store.chats.writeActivity({ ...c5, lastActivityAt: at(30) }, [u], c5.lastActivityAt), 'not-found', 'a deleted chat is not written');
    t.same(ids(await store.chats.chatsByActivity(appId, u, undefined, 10)), [c2.id, c4.id, c1.id]);
    t.same(await store.chats.chatCounts(appId, [u, other]), new Map([[u, 3], [other, 4]]), 'counts follow leaves and deletes');
    t.equal(await store.chats.recountChats(appId, u), 3);

    const later = chat(appId, { lastActivityAt: at(40) });
    await store.chats.create(later, [member(later, other, { role: 'owner' })]);
    await store.chats.putMember(member(later, u));
    t.same(await store.chats.chatsByActivity(appId, u, undefined, 1), [{ at: at(40), chatId: later.id }], "an added member is indexed at the chat's activity time");
    await store.chats.putMember(member(later, u, { role: 'admin' }));
    t.same(await store.chats.chatCounts(appId, [u]), new Map([[u, 4]]), 'an update of a member is not counted again');
    t.same(ids(await store.chats.chatsByActivity(appId, u, undefined, 10)), [later.id, c2.id, c4.id, c1.id]);
  });

  withStore("chats: a user's chats at the same activity time are ordered by chat id, descending, and paged without loss", async (t, store) => {
    const appId = randomUUID();
    const u = randomUUID();
    const chats = Array.from({ length: 5 }, () => chat(appId, { lastActivityAt: at(7) }));
    for (const c of chats) await store.chats.create(c, [member(c, u)]);
    const expected = chats.map((c) => c.id).sort().reverse();
    const seen: string[] = [];
    let after: { at: string; chatId: string } | undefined;
    for (;;) {
      const page = await store.chats.chatsByActivity(appId, u, after, 2);
      seen.push(...page.map((e) => e.chatId));
      if (page.length < 2) break;
      after = page.at(-1);
    }
    t.same(seen, expected);
  });

  withStore('chats: markRead raises a mark, never lowers it, and refuses non-members', async (t, store) => {
    const appId = randomUUID();
    const c = chat(appId);
    const u = randomUUID();
    await store.chats.create(c, [member(c, u)]);
    t.equal(await store.chats.markRead(appId, c.id, u, 10), 10);
    t.equal(await store.chats.markRead(appId, c.id, u, 4), 10, 'a lower mark leaves the stored one');
    t.equal((await store.chats.member(appId, c.id, u))?.readSeq, 10);
    t.equal(await store.chats.markRead(appId, c.id, randomUUID(), 3), undefined, 'not a member');
    t.equal(await store.chats.markRead(randomUUID(), c.id, u, 3), undefined, 'another app');
    const marks = await Promise.all([3, 12, 7, 11].map((seq) => store.chats.markRead(appId, c.id, u, seq)));
    t.ok(marks.every((m) => m !== undefined && m >= 10), 'concurrent marks never go below the stored one');
    t.equal((await store.chats.member(appId, c.id, u))?.readSeq, 12, 'the highest concurrent mark wins');
  });

  withStore('chats: writeReadMarks writes several members at once and never makes a member', async (t, store) => {
    const appId = randomUUID();
    const c = chat(appId);
    const [u, v, gone] = [randomUUID(), randomUUID(), randomUUID()];
    await store.chats.create(c, [member(c, u), member(c, v), member(c, gone)]);
    await store.chats.removeMember(appId, c.id, gone);
    await store.chats.writeReadMarks(appId, c.id, [
      { userId: u, seq: 5 },
      { userId: v, seq: 9 },
      { userId: gone, seq: 3 },
      { userId: randomUUID(), seq: 3 },
    ]);
    t.equal((await store.chats.member(appId, c.id, u))?.readSeq, 5);
    t.equal((await store.chats.member(appId, c.id, v))?.readSeq, 9);
    t.equal(await store.chats.member(appId, c.id, gone), undefined, 'a removed member stays removed');
    t.same((await store.chats.members(appId, c.id)).map((m) => m.userId).sort(), [u, v].sort(), 'members lists only members');
    await store.chats.putMember(member(c, gone));
    t.match(await store.chats.member(appId, c.id, gone), { role: 'member' }, 'the removed user can be added again');
    await store.chats.writeReadMarks(appId, c.id, []);
    t.equal(await store.chats.markRead(appId, c.id, u, 7), 7, 'markRead goes on from the written mark');
  });

  withStore('messages: put is durable and idempotent; a changed message replaces the stored one', async (t, store) => {
    const c = chat(randomUUID());
    const [m1, m2] = messages(c, 2, (i) => T0 + i);
    await store.messages.put([m1!, m2!]);
    await store.messages.put([m1!]);
    t.same(await store.messages.get(c.appId, c.id, m1!.id), m1);
    t.same(await walkBackward(store, c, 10), [2, 1], 'writing twice leaves one copy');
    const edited: StoredMessage = { ...m1!, content: 'edited', editedAt: LATER, reactions: [{ reactionId: randomUUID(), userId: c.createdBy, reaction: '👍', createdAt: LATER }] };
    await store.messages.put([edited]);
    t.same(await store.messages.get(c.appId, c.id, m1!.id), edited);
    const hidden: StoredMessage = { ...edited, hiddenAt: LATER };
    await store.messages.put([hidden]);
    t.same(await store.messages.get(c.appId, c.id, m1!.id), hidden, 'hidden pending review, its content kept');
    await store.messages.put([edited]);
    t.same(await store.messages.get(c.appId, c.id, m1!.id), edited, 'restored: hiddenAt cleared');
    const deleted: StoredMessage = { ...m2!, content: '', deletedAt: LATER };
    await store.messages.put([deleted]);
    t.same(await store.messages.get(c.appId, c.id, m2!.id), deleted, 'a tombstone keeps its seq');
    t.same(await walkBackward(store, c, 10), [2, 1]);
    await store.messages.put([]);
    t.equal(await store.messages.get(randomUUID(), c.id, m1!.id), undefined, "another app's message is not found");
    t.equal(await store.messages.get(c.appId, c.id, uuidv7({ msecs: T0 })), undefined);
  });

  withStore('messages: attachments are kept with the message, through an edit and on its tombstone', async (t, store) => {
    const c = chat(randomUUID());
    const [plain, withFiles] = messages(c, 2, (i) => T0 + i);
    const attachments = [
      { id: randomUUID(), name: 'photo.jpg', size: 48213, type: 'image/jpeg', width: 1024, height: 768, placeholder: 'HBkSHYSIeHiPiHh8eJd4eTN0EEQG', thumbnail: { width: 320, height: 240, type: 'image/webp' as const } },
      { id: randomUUID(), name: 'report.pdf', size: 1200, type: 'application/pdf' },
    ];
    const sent: StoredMessage = { ...withFiles!, content: '', attachments };
    await store.messages.put([plain!, sent]);
    t.same(await store.messages.get(c.appId, c.id, sent.id), sent, 'the attachments read back as written, empty content too');
    t.same(await store.messages.get(c.appId, c.id, plain!.id), plain, 'a message without attachments has none');
    t.same((await store.messages.pageBackward(c.appId, c.id, undefined, 10)).find((m) => m.id === sent.id), sent, 'and in a page of history');
    const edited: StoredMessage = { ...sent, content: 'with a caption', editedAt: LATER };
    await store.messages.put([edited]);
    t.same(await store.messages.get(c.appId, c.id, sent.id), edited, 'an edit keeps them');
    const tombstone: StoredMessage = { ...edited, content: '', deletedAt: LATER };
    await store.messages.put([tombstone]);
    t.same((await store.messages.get(c.appId, c.id, sent.id))?.attachments, attachments, 'the tombstone keeps them (their files are deleted from it)');
    for (const a of attachments) t.equal(await store.messages.attachmentHolder(c.appId, c.id, a.id), sent.id, `${a.name}: held by its message`);
    t.equal(await store.messages.attachmentHolder(c.appId, c.id, randomUUID()), undefined, 'an upload no message carries');
    t.equal(await store.messages.attachmentHolder(randomUUID(), c.id, attachments[0]!.id), undefined, "another app's");
  });

  withStore('messages: paging backward crosses buckets, skips empty ones, and yields each message once', async (t, store) => {
    const c = chat(randomUUID());
    // Three clusters of messages days apart, with empty buckets between them.
    const days = [0, 3, 40];
    let seq = 1;
    const all: StoredMessage[] = [];
    for (const day of days) {
      const batch = messages(c, 25, (i) => T0 + day * BUCKET_MS + i * 1000, seq);
      seq += batch.length;
      all.push(...batch);
    }
    // Written in two halves out of order, as several batches of an actor would be.
    await store.messages.put(all.slice(40));
    await store.messages.put(all.slice(0, 40));
    const expected = all.map((m) => m.seq).reverse();
    for (const size of [1, 7, 25, 50, 100]) t.same(await walkBackward(store, c, size), expected, `size ${size}: newest first, complete, no duplicates`);

    const middle = all[30]!;
    const page = await store.messages.pageBackward(c.appId, c.id, middle.id, 10);
    t.same(page.map((m) => m.seq), [30, 29, 28, 27, 26, 25, 24, 23, 22, 21], 'the cursor is exclusive and the page crosses a bucket');
    const oldest = await store.messages.pageBackward(c.appId, c.id, all[0]!.id, 10);
    t.same(oldest, [], 'nothing older than the oldest');
    t.same(await store.messages.pageBackward(randomUUID(), c.id, undefined, 10), [], "another app's chat is empty");
    const otherChat = chat(c.appId);
    t.same(await store.messages.pageBackward(c.appId, otherChat.id, undefined, 10), [], 'another chat is empty');
  });

  withStore('messages: getMany reads several of a chat by id, across partitions, in the order asked', async (t, store) => {
    const c = chat(randomUUID());
    // Ids that carry their seq (as the service makes them), two of them a partition apart on
    // Cassandra (1,024 seqs a block), and one that does not (found through the id index).
    const [near, far] = [1, 1030].map((seq) => ({ ...messages(c, 1, () => T0, seq)[0]!, id: newMessageId(seq) }));
    const plain = messages(c, 1, () => T0 + 5000, 7)[0]!;
    await store.messages.put([near!, plain, far!]);
    const absent = newMessageId(3);
    t.same(await store.messages.getMany(c.appId, c.id, [far!.id, absent, plain.id, near!.id]), [far, undefined, plain, near], 'each once, in the order asked, none where there is none');
    t.same(await store.messages.getMany(c.appId, c.id, []), [], 'none asked');
    t.same(await store.messages.getMany(randomUUID(), c.id, [near!.id]), [undefined], "another application's chat: none");
  });

  withStore('messages: afterSeq, lastSeq and idempotency keys', async (t, store) => {
    const c = chat(randomUUID());
    t.equal(await store.messages.lastSeq(c.appId, c.id), 0, 'an empty chat has seq 0');
    const batch = messages(c, 30, (i) => T0 + i * 60_000);
    const keyed: StoredMessage = { ...batch[4]!, clientKey: 'retry-me' };
    batch[4] = keyed;
    await store.messages.put(batch);
    t.equal(await store.messages.lastSeq(c.appId, c.id), 30);
    t.equal(await store.messages.lastSeq(randomUUID(), c.id), 0, 'tenancy');
    t.same(await store.messages.newest(c.appId, c.id), { seq: 30, rev: 0 }, 'the newest message stored (unfenced, no revisions)');
    t.same(await store.messages.newest(randomUUID(), c.id), { seq: 0, rev: 0 }, 'tenancy');
    t.same((await store.messages.afterSeq(c.appId, c.id, 0, 5)).map((m) => m.seq), [1, 2, 3, 4, 5], 'oldest first, limited');
    t.same((await store.messages.afterSeq(c.appId, c.id, 27, 10)).map((m) => m.seq), [28, 29, 30]);
    t.same(await store.messages.afterSeq(c.appId, c.id, 30, 10), []);
    t.same(await store.messages.afterSeq(randomUUID(), c.id, 0, 10), [], 'tenancy');
    t.same(await store.messages.byClientKey(c.appId, c.id, c.createdBy, 'retry-me'), keyed);
    t.equal(await store.messages.byClientKey(c.appId, c.id, randomUUID(), 'retry-me'), undefined, "keys are per sender");
    t.equal(await store.messages.byClientKey(c.appId, c.id, c.createdBy, 'other'), undefined);
    t.equal(await store.messages.byClientKey(randomUUID(), c.id, c.createdBy, 'retry-me'), undefined, 'tenancy');
  });

  withStore('messages: revisions index only the latest write of each message, in revision order', async (t, store) => {
    const c = chat(randomUUID());
    t.equal(await store.messages.lastRev(c.appId, c.id), 0, 'an empty chat has revision 0');
    const batch = messages(c, 5, (i) => T0 + i * 1000).map((m, i) => ({ ...m, rev: i + 1 }));
    await store.messages.put(batch);
    t.equal(await store.messages.lastRev(c.appId, c.id), 5);
    t.same((await store.messages.changedSince(c.appId, c.id, 0, 10)).map((m) => m.rev), [1, 2, 3, 4, 5]);
    // Message seq 2 is edited (rev 6), then reacted to (rev 7); message seq 4 is deleted (rev 8).
    await store.messages.put([{ ...batch[1]!, content: 'edited', editedAt: LATER, rev: 6 }]);
    await store.messages.put([{ ...batch[1]!, content: 'edited', editedAt: LATER, rev: 7, reactions: [{ reactionId: randomUUID(), userId: c.createdBy, reaction: '👍', createdAt: LATER }] }]);
    await store.messages.put([{ ...batch[3]!, content: '', deletedAt: LATER, rev: 8 }]);
    t.equal(await store.messages.lastRev(c.appId, c.id), 8);
    const changed = await store.messages.changedSince(c.appId, c.id, 5, 10);
    t.same(changed.map((m) => [m.seq, m.rev]), [[2, 7], [4, 8]], 'each changed message once, at its latest revision');
    t.equal(changed[0]!.reactions.length, 1, 'in its current state');
    t.same((await store.messages.changedSince(c.appId, c.id, 0, 10)).map((m) => m.rev), [1, 3, 5, 7, 8], 'superseded revisions are gone');
    t.same((await store.messages.changedSince(c.appId, c.id, 0, 2)).map((m) => m.rev), [1, 3], 'limited');
    t.same(await store.messages.changedSince(c.appId, c.id, 8, 10), []);
    await store.messages.put([{ ...batch[3]!, content: '', deletedAt: LATER, rev: 8 }]);
    t.same((await store.messages.changedSince(c.appId, c.id, 7, 10)).map((m) => m.rev), [8], 'rewriting a revision is idempotent');
    t.equal(await store.messages.lastRev(randomUUID(), c.id), 0, 'tenancy');
    t.same(await store.messages.changedSince(randomUUID(), c.id, 0, 10), [], 'tenancy');
  });

  withStore('signing keys: the first key ensured is kept', async (t, store) => {
    const first = generateSigningKey(new Date(T0));
    t.same(await store.signingKeys.ensure(first), first);
    t.same(await store.signingKeys.ensure(generateSigningKey(new Date(T0 + 1000))), first, 'a later candidate does not replace it');
    t.same(await store.signingKeys.list(), [first]);
  });

  withStore('signing keys: a rotation stores the new key and retires the others, keeping an earlier retirement', async (t, store) => {
    // Written to hold on a store that has keys already (one keyspace shared by the Cassandra suite).
    const first = await store.signingKeys.ensure(generateSigningKey(new Date(T0)));
    const before = await store.signingKeys.list();
    const next = generateSigningKey(new Date(T0 + 10_000), new Date(T0 + 30_000));
    await store.signingKeys.rotate(next, at(100));
    const after = await store.signingKeys.list();
    t.same(after.map((k) => k.kid), [...before.map((k) => k.kid), next.kid], 'oldest first, the new key last');
    t.same(after.at(-1), next, 'stored as given');
    for (const k of after.slice(0, -1)) t.equal(k.retiresAt, k.retiresAt && k.retiresAt < at(100) ? k.retiresAt : at(100), `${k.kid} retires`);
    const third = generateSigningKey(new Date(T0 + 20_000), new Date(T0 + 40_000));
    await store.signingKeys.rotate(third, at(200));
    const last = await store.signingKeys.list();
    t.equal(last.find((k) => k.kid === first.kid)?.retiresAt, at(100), 'an earlier retirement is kept');
    t.equal(last.find((k) => k.kid === next.kid)?.retiresAt, at(200), 'the key replaced now retires at the new time');
    t.equal((await store.signingKeys.ensure(generateSigningKey(new Date(T0 + 50_000)))).kid, first.kid, 'ensure returns the first key (as stored now) and adds none');
    t.equal((await store.signingKeys.list()).length, last.length);
    await t.rejects(store.signingKeys.rotate(third, at(300)), { code: 'KEY_ROTATION_CONFLICT' }, 'a kid stored already is refused');
  });

  /** A fenced put's outcome: undefined when it applied, else what it rejected with. */
  const fenced = (store: NodeStore, list: StoredMessage[], from: ChatHead, to: ChatHead) => store.messages.put(list, { from, to }).then(() => undefined, (e: unknown) => e);
  const withRevs = (list: StoredMessage[]) => list.map((m) => ({ ...m, rev: m.seq }));
  const head = async (store: NodeStore, c: Chat): Promise<ChatHead> => ({ seq: await store.messages.lastSeq(c.appId, c.id), rev: await store.messages.lastRev(c.appId, c.id) });

  withStore('messages: a fenced batch that creates a message and changes it keeps one copy at its last revision', async (t, store) => {
    const c = chat(randomUUID());
    const [m1, m2] = withRevs(messages(c, 2, (i) => T0 + i));
    const reacted: StoredMessage = { ...m1!, rev: 3, reactions: [{ reactionId: randomUUID(), userId: c.createdBy, reaction: '👍', createdAt: LATER }] };
    t.equal(await fenced(store, [m1!, m2!, reacted], { seq: 0, rev: 0 }, { seq: 2, rev: 3 }), undefined);
    t.same(await store.messages.get(c.appId, c.id, m1!.id), reacted, 'the message in its last state');
    t.same((await store.messages.changedSince(c.appId, c.id, 0, 10)).map((m) => [m.seq, m.rev]), [[2, 2], [1, 3]], 'its first revision is not indexed');
    // A later batch edits a message an earlier one wrote: its old revision row goes.
    const edited: StoredMessage = { ...m2!, content: 'edited', editedAt: LATER, rev: 4 };
    t.equal(await fenced(store, [edited], { seq: 2, rev: 3 }, { seq: 2, rev: 4 }), undefined);
    t.same((await store.messages.changedSince(c.appId, c.id, 0, 10)).map((m) => [m.seq, m.rev]), [[1, 3], [2, 4]], 'the edit replaced the revision row');
    t.same((await store.messages.afterSeq(c.appId, c.id, 0, 10)).map((m) => m.content), ['m1', 'edited']);
  });

  withStore('messages: a fenced put applies only on the head it names, and a stale one writes nothing', async (t, store) => {
    const c = chat(randomUUID());
    const first = withRevs(messages(c, 3, (i) => T0 + i));
    t.equal(await fenced(store, first, { seq: 0, rev: 0 }, { seq: 3, rev: 3 }), undefined, 'the first fenced put of a chat applies from (0, 0)');
    t.same(await head(store, c), { seq: 3, rev: 3 }, 'lastSeq and lastRev are its head');

    // A writer that still believes the head is (0, 0) is refused, and nothing of its put is kept.
    const stale = withRevs(messages(c, 2, (i) => T0 + 30 + i, 1)).map((m) => ({ ...m, content: `stale ${m.seq}` }));
    const refused = await fenced(store, stale, { seq: 0, rev: 0 }, { seq: 2, rev: 2 });
    t.ok(refused instanceof FencedError, 'a stale fence is refused with FencedError');
    t.same(refused instanceof FencedError && [refused.code, refused.appId, refused.chatId, refused.found], ['FENCED', c.appId, c.id, { seq: 3, rev: 3 }], 'naming the chat and the head it found');
    t.same((await store.messages.afterSeq(c.appId, c.id, 0, 10)).map((m) => m.content), ['m1', 'm2', 'm3'], 'nothing of the refused put was written');
    for (const m of stale) t.equal(await store.messages.get(c.appId, c.id, m.id), undefined);
    t.same(await head(store, c), { seq: 3, rev: 3 }, 'and the head did not move');

    t.equal(await fenced(store, withRevs(messages(c, 2, (i) => T0 + 10 + i, 4)), { seq: 3, rev: 3 }, { seq: 5, rev: 5 }), undefined);
    t.same((await store.messages.afterSeq(c.appId, c.id, 0, 10)).map((m) => m.seq), [1, 2, 3, 4, 5], 'the writer holding the head goes on');
    t.same(await head(store, c), { seq: 5, rev: 5 });

    // An edit moves only the revision.
    t.equal(await fenced(store, [{ ...first[1]!, content: 'edited', editedAt: LATER, rev: 6 }], { seq: 5, rev: 5 }, { seq: 5, rev: 6 }), undefined);
    t.same(await head(store, c), { seq: 5, rev: 6 });
    t.equal((await store.messages.get(c.appId, c.id, first[1]!.id))?.content, 'edited');

    // Unfenced puts work as before, and the head counts them.
    const loose = { ...messages(c, 1, (i) => T0 + 20 + i, 6)[0]!, rev: 7 };
    await store.messages.put([loose]);
    t.same(await store.messages.get(c.appId, c.id, loose.id), loose, 'an unfenced put is written');
    t.same(await head(store, c), { seq: 6, rev: 7 }, 'and the head takes it in');
    t.equal(await fenced(store, withRevs(messages(c, 1, (i) => T0 + 40 + i, 7)).map((m) => ({ ...m, rev: 8 })), { seq: 6, rev: 7 }, { seq: 7, rev: 8 }), undefined, 'a fenced put from there applies');
    t.same(await head(store, c), { seq: 7, rev: 8 });
  });

  withStore('messages: of two fenced puts racing from one head exactly one applies', async (t, store) => {
    const c = chat(randomUUID());
    // From a chat whose messages were written unfenced (no head stored yet), then from a stored head.
    await store.messages.put(withRevs(messages(c, 2, (i) => T0 + i)));
    for (const [from, at] of [[2, 10], [3, 20]] as const) {
      const rivals = ['a', 'b'].map((who, k) => withRevs(messages(c, 1, (i) => T0 + at + k + i, from + 1)).map((m) => ({ ...m, content: who })));
      const outcomes = await Promise.all(rivals.map((list) => fenced(store, list, { seq: from, rev: from }, { seq: from + 1, rev: from + 1 })));
      t.equal(outcomes.filter((o) => o === undefined).length, 1, `from ${from}: one of two racing fenced puts applies`);
      const loser = outcomes.findIndex((o) => o !== undefined);
      t.ok(outcomes[loser] instanceof FencedError, 'the other is fenced');
      t.same((outcomes[loser] as FencedError).found, { seq: from + 1, rev: from + 1 }, "naming the winner's head");
      t.same((await store.messages.afterSeq(c.appId, c.id, from, 10)).map((m) => m.content), [loser === 0 ? 'b' : 'a'], `seq ${from + 1} exists once, the winner's`);
      t.equal(await store.messages.get(c.appId, c.id, rivals[loser]![0]!.id), undefined, "the loser's message is not written");
      t.same(await head(store, c), { seq: from + 1, rev: from + 1 });
    }
  });

  withStore("messages: the head keeps numbers a fenced put took beyond the messages it wrote", async (t, store) => {
    const c = chat(randomUUID());
    // As if seqs 3 and 4 were taken by messages whose writes never happened.
    t.equal(await fenced(store, withRevs(messages(c, 2, (i) => T0 + i)), { seq: 0, rev: 0 }, { seq: 4, rev: 4 }), undefined);
    t.same(await head(store, c), { seq: 4, rev: 4 }, 'lastSeq and lastRev report the head, not the highest message');
    const next = withRevs(messages(c, 1, (i) => T0 + 10 + i, 3));
    const refused = await fenced(store, next, { seq: 2, rev: 2 }, { seq: 3, rev: 3 });
    t.same(refused instanceof FencedError && refused.found, { seq: 4, rev: 4 }, 'a writer resuming from the messages is fenced: their numbers are never reused');
    t.equal(await fenced(store, withRevs(messages(c, 1, (i) => T0 + 10 + i, 5)), { seq: 4, rev: 4 }, { seq: 5, rev: 5 }), undefined, 'one resuming from the head goes on');
    t.same((await store.messages.afterSeq(c.appId, c.id, 0, 10)).map((m) => m.seq), [1, 2, 5]);
  });

  const withTwo = (title: string, body: (t: Test, a: NodeStore, b: NodeStore) => Promise<void>) =>
    t.test(`${name}: ${title}`, async (t) => {
      const { store, another, cleanup } = await open();
      t.teardown(cleanup);
      await body(t, store, await another());
    });
  const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);

  withTwo('writers: while one instance holds a chat, the fenced writes of another are refused and name it', async (t, a, b) => {
    const c = chat(randomUUID());
    const owner = randomUUID();
    await a.chats.create(c, [member(c, owner, { role: 'owner' })]);
    t.not(a.writers.self.id, b.writers.self.id, 'each instance is a writer of its own');
    t.equal(await fenced(a, withRevs(messages(c, 2, (i) => T0 + i)), { seq: 0, rev: 0 }, { seq: 2, rev: 2 }), undefined, 'a fenced put takes the chat');
    const refused = await fenced(b, withRevs(messages(c, 1, (i) => T0 + 10 + i, 3)), { seq: 2, rev: 2 }, { seq: 3, rev: 3 });
    t.ok(refused instanceof FencedError, 'a fenced put of the other instance is refused');
    t.equal(refused instanceof FencedError && refused.holder?.id, a.writers.self.id, 'naming the instance that holds the chat');
    t.same((await b.messages.afterSeq(c.appId, c.id, 0, 10)).map((m) => m.seq), [1, 2], 'and writes nothing');
    const joiner = member(c, randomUUID());
    t.ok((await refusal(b.chats.putMember(joiner, { fenced: true }))) instanceof FencedError, 'a fenced membership write of the other instance is refused too');
    t.ok((await refusal(b.chats.removeMember(c.appId, c.id, owner, { fenced: true }))) instanceof FencedError, 'and a fenced removal');
    t.same((await a.chats.members(c.appId, c.id)).map((m) => m.userId), [owner], 'the members are unchanged');
    await a.chats.putMember(joiner, { fenced: true });
    t.equal((await a.chats.member(c.appId, c.id, joiner.userId))?.role, 'member', 'the holder changes members');

    const other = chat(c.appId);
    t.equal(await fenced(b, withRevs(messages(other, 1, (i) => T0 + i)), { seq: 0, rev: 0 }, { seq: 1, rev: 1 }), undefined, 'holds are per chat: the other instance writes another chat');
  });

  withTwo('writers: a chat released with its writes settled goes on from its exact head on another instance', async (t, a, b) => {
    const c = chat(randomUUID());
    await a.chats.create(c, [member(c, c.createdBy, { role: 'owner' })]);
    t.equal(await fenced(a, withRevs(messages(c, 3, (i) => T0 + i)), { seq: 0, rev: 0 }, { seq: 3, rev: 3 }), undefined);
    await a.writers.release(c.appId, c.id);
    await a.writers.release(c.appId, c.id);
    t.pass('releasing twice is harmless');
    t.same({ seq: await b.messages.lastSeq(c.appId, c.id), rev: await b.messages.lastRev(c.appId, c.id) }, { seq: 3, rev: 3 }, 'the other instance finds the exact head');
    t.equal(await fenced(b, withRevs(messages(c, 1, (i) => T0 + 10 + i, 4)), { seq: 3, rev: 3 }, { seq: 4, rev: 4 }), undefined, 'and takes the chat from there');
    await b.chats.removeMember(c.appId, c.id, c.createdBy, { fenced: true });
    const late = await fenced(a, withRevs(messages(c, 1, (i) => T0 + 20 + i, 4)), { seq: 3, rev: 3 }, { seq: 4, rev: 4 });
    t.ok(late instanceof FencedError, 'the instance that released it is refused now');
    t.equal(late instanceof FencedError && late.holder?.id, b.writers.self.id);
    t.same((await a.messages.afterSeq(c.appId, c.id, 0, 10)).map((m) => [m.seq, m.content]), [[1, 'm1'], [2, 'm2'], [3, 'm3'], [4, 'm4']], 'every number once, no gap');
    t.same(await a.chats.members(c.appId, c.id), [], 'the fenced removal by the new holder applied');
    await a.writers.release(c.appId, randomUUID());
    t.pass('releasing a chat one does not hold does nothing');
  });

  withStore('messages: a fenced put names one chat', async (t, store) => {
    const [c, d] = [chat(randomUUID()), chat(randomUUID())];
    const both = [...messages(c, 1, (i) => T0 + i), ...messages(d, 1, (i) => T0 + i)];
    const refused = await fenced(store, both, { seq: 0, rev: 0 }, { seq: 1, rev: 1 });
    t.ok(refused instanceof Error && !(refused instanceof FencedError), 'refused with a plain Error');
    for (const m of both) t.equal(await store.messages.get(m.appId, m.chatId, m.id), undefined, 'and nothing written');
    t.same(await head(store, c), { seq: 0, rev: 0 });
  });

  outboxConformance(withStore);
  changeEventsConformance(withStore);
  moderationConformance(withStore);
  chatModerationConformance(withStore);
  conversationConformance(withStore);
  threadConformance(withStore);
  threadLogConformance(withStore);
  searchConformance(withStore);
  pushConformance(withStore);
}
