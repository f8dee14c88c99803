import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { v7 as uuidv7 } from 'uuid';
import { EventIds } from '../../common/webhooks/index.ts';
import { changeLanded, type ChangeCheck, type Chat, type ChatUser, type Member, type NodeStore, type OutboxEvent } from '../../node/store/index.ts';
import { LATER, NOW } from '../helpers/fixed-clock.ts';

/**
 * The webhook events of chat, member and user changes (EventOptions), part of the node store
 * conformance suite (see store-conformance.ts): what a recovery would deliver from the writer's
 * outbox after each kind of change, applied or not, whatever the store does underneath (the same
 * transaction on LMDB; written ahead, then confirmed, on Cassandra).
 */
export function changeEventsConformance(withStore: (title: string, body: (t: Test, store: NodeStore) => Promise<void>) => void): void {
  const ids = new EventIds();
  const event = (appId: string, type: string, check: ChangeCheck): OutboxEvent => {
    const id = ids.next();
    return { id, appId, type, body: JSON.stringify({ type, id }), check };
  };
  const user = (appId: string, username = `u-${randomUUID()}`): ChatUser => ({ appId, id: randomUUID(), username, displayName: 'User', createdAt: NOW, updatedAt: NOW });
  const chat = (appId: string, kind: Chat['kind'] = 'group'): Chat => ({ appId, id: randomUUID(), kind, ...(kind === 'group' ? { name: 'Group' } : {}), createdBy: randomUUID(), createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW });
  const member = (c: Chat, userId: string): Member => ({ appId: c.appId, chatId: c.id, userId, role: 'member', joinedAt: NOW, readSeq: 0 });

  /** Ids of the writer's events a recovery would deliver now: those without a check, or whose check finds its change. */
  async function deliverable(store: NodeStore): Promise<Set<string>> {
    const out = new Set<string>();
    for (const p of await store.outbox.pending(store.writers.self.id, undefined, 10_000)) {
      if (p.event.check === undefined || (await changeLanded(store, p.event.appId, p.event.check))) out.add(p.event.id);
    }
    return out;
  }

  withStore('change events: each applied change has its events in the outbox once it resolves; one that does not apply leaves none to deliver', async (t, store) => {
    const appId = randomUUID();
    const alice = user(appId, 'alice');
    const created = event(appId, 'user.created', { kind: 'user', userId: alice.id, present: true, username: 'alice' });
    t.equal(await store.users.create(alice, { events: [created] }), 'created');
    const taken = user(appId, 'alice');
    const notCreated = event(appId, 'user.created', { kind: 'user', userId: taken.id, present: true, username: 'alice' });
    t.equal(await store.users.create(taken, { events: [notCreated] }), 'exists', 'a username taken');

    const group = chat(appId);
    group.createdBy = alice.id;
    const chatCreated = event(appId, 'chat.created', { kind: 'member', chatId: group.id, userId: alice.id, present: true });
    await store.chats.create(group, [member(group, alice.id)], { events: [chatCreated] });
    const renamed = { ...group, name: 'Renamed', updatedAt: LATER };
    const updated = event(appId, 'chat.updated', { kind: 'chat', chatId: group.id, present: true, updatedAt: LATER });
    t.equal(await store.chats.update(renamed, { events: [updated] }), 'updated');
    const missing = chat(appId);
    const notUpdated = event(appId, 'chat.updated', { kind: 'chat', chatId: missing.id, present: true, updatedAt: NOW });
    t.equal(await store.chats.update(missing, { events: [notUpdated] }), 'not-found', 'a chat that is not there');

    const bob = randomUUID();
    const added = event(appId, 'member.added', { kind: 'member', chatId: group.id, userId: bob, present: true });
    await store.chats.putMember(member(group, bob), { events: [added] });
    const removed = event(appId, 'member.removed', { kind: 'member', chatId: group.id, userId: bob, present: false });
    t.equal(await store.chats.removeMember(appId, group.id, bob, { events: [removed] }), 'removed');
    const notRemoved = event(appId, 'member.removed', { kind: 'member', chatId: group.id, userId: randomUUID(), present: false });
    t.equal(await store.chats.removeMember(appId, group.id, randomUUID(), { events: [notRemoved] }), 'not-found', 'not a member');

    const direct = chat(appId, 'direct');
    const pair: [Member, Member] = [member(direct, alice.id), member(direct, bob)];
    const directCreated = event(appId, 'chat.created', { kind: 'member', chatId: direct.id, userId: alice.id, present: true });
    t.equal((await store.chats.ensureDirect(direct, pair, { events: [directCreated] })).created, true);
    const again = chat(appId, 'direct');
    const notCreatedAgain = event(appId, 'chat.created', { kind: 'member', chatId: again.id, userId: alice.id, present: true });
    t.equal((await store.chats.ensureDirect(again, [member(again, bob), member(again, alice.id)], { events: [notCreatedAgain] })).created, false, 'the pair has its chat');

    const deleted = event(appId, 'chat.deleted', { kind: 'chat', chatId: group.id, present: false });
    t.equal(await store.chats.delete(appId, group.id, { events: [deleted] }), 'deleted');
    const notDeleted = event(appId, 'chat.deleted', { kind: 'chat', chatId: missing.id, present: false });
    t.equal(await store.chats.delete(appId, missing.id, { events: [notDeleted] }), 'not-found');
    const userDeleted = event(appId, 'user.deleted', { kind: 'user', userId: alice.id, present: false });
    t.equal(await store.users.delete(appId, alice.id, { events: [userDeleted] }), 'deleted');
    const userNotDeleted = event(appId, 'user.deleted', { kind: 'user', userId: taken.id, present: false });
    t.equal(await store.users.delete(appId, taken.id, { events: [userNotDeleted] }), 'not-found');

    const now = await deliverable(store);
    // Every applied change's event, although later changes undid most of what their checks look
    // for (the user and the group are gone, bob left): an acknowledged change's event is never lost.
    for (const [what, e] of [['user.created', created], ['chat.created', chatCreated], ['chat.updated', updated], ['member.added', added], ['member.removed', removed], ['direct chat.created', directCreated], ['chat.deleted', deleted], ['user.deleted', userDeleted]] as const) {
      t.ok(now.has(e.id), `${what}: delivered`);
    }
    for (const [what, e] of [['user.created (username taken)', notCreated], ['chat.updated (no chat)', notUpdated], ['member.removed (not a member)', notRemoved], ['chat.created (pair taken)', notCreatedAgain], ['chat.deleted (no chat)', notDeleted], ['user.deleted (no user)', userNotDeleted]] as const) {
      t.notOk(now.has(e.id), `${what}: nothing to deliver`);
    }
  });

  withStore('change events: a check finds the state its change left, for each kind', async (t, store) => {
    const appId = randomUUID();
    const u = user(appId);
    t.equal(await store.users.create(u), 'created');
    t.equal(await changeLanded(store, appId, { kind: 'user', userId: u.id, present: true, username: u.username }), true, 'a user holding its username');
    t.equal(await changeLanded(store, appId, { kind: 'user', userId: u.id, present: true, username: 'someone-else' }), false, 'a username it does not hold');
    t.equal(await changeLanded(store, appId, { kind: 'user', userId: u.id, present: false }), false, 'a user still there is not deleted');
    const c = chat(appId);
    await store.chats.create(c, [member(c, u.id)]);
    t.equal(await changeLanded(store, appId, { kind: 'chat', chatId: c.id, present: true, updatedAt: NOW }), true, 'a chat updated at the time');
    t.equal(await changeLanded(store, appId, { kind: 'chat', chatId: c.id, present: true, updatedAt: LATER }), false, 'an update that did not land');
    t.equal(await changeLanded(store, appId, { kind: 'chat', chatId: randomUUID(), present: false }), true, 'a chat that is not there');
    t.equal(await changeLanded(store, appId, { kind: 'member', chatId: c.id, userId: u.id, present: true }), true, 'a member');
    t.equal(await changeLanded(store, appId, { kind: 'member', chatId: c.id, userId: randomUUID(), present: true }), false, 'not a member');
    const id = uuidv7();
    await store.messages.put([{ appId, chatId: c.id, id, seq: 1, senderId: u.id, content: 'hi', createdAt: NOW, reactions: [], rev: 2 }], { from: { seq: 0, rev: 0 }, to: { seq: 1, rev: 2 } });
    t.equal(await changeLanded(store, appId, { chatId: c.id, messageId: id, rev: 2 }), true, 'a message at its revision');
    t.equal(await changeLanded(store, appId, { chatId: c.id, messageId: id, rev: 3 }), false, 'a revision not written');
  });

  withStore('change events: confirm clears the check of an event written ahead, and ignores what it does not know', async (t, store) => {
    const owner = `node-${randomUUID()}`;
    const appId = randomUUID();
    const ahead = event(appId, 'member.added', { kind: 'member', chatId: randomUUID(), userId: randomUUID(), present: true });
    const message = { ...event(appId, 'message.new', { chatId: randomUUID(), messageId: randomUUID(), rev: 1 }) };
    await store.outbox.append(owner, [ahead, message]);
    t.same((await store.outbox.pending(owner, undefined, 10)).map((p) => p.event.check), [ahead.check, message.check], 'both kinds of check read back');
    await store.outbox.confirm(owner, [ahead.id, ids.next()]);
    const [first, second] = await store.outbox.pending(owner, undefined, 10);
    t.same(first!.event, { id: ahead.id, appId, type: ahead.type, body: ahead.body }, 'confirmed: no check left');
    t.same(second!.event.check, message.check, 'the other keeps its check');
  });
}
