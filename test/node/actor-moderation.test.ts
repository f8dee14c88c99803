import { randomUUID } from 'node:crypto';
import t from 'tap';
import { ApiError } from '../../common/index.ts';
import { ChatActor, type SendResult } from '../../node/chat/actor.ts';
import { moderationRefusal } from '../../node/chat/chat-moderation.ts';
import type { ChatEvent, EventSink } from '../../node/chat/events.ts';
import type { Member } from '../../node/store/index.ts';
import { MemoryNodeStore } from '../helpers/memory-node-store.ts';

// The chat actor's side of mutes and chat bans (README, "Moderation"), on a fake store with a
// clock the test moves: what a mute refuses and when it lifts, what survives a reload, and the
// order of a ban's announcements.
const T0 = Date.parse('2030-01-01T00:00:00.000Z');

function setup() {
  const fake = new MemoryNodeStore();
  const appId = randomUUID();
  const { chat, ids } = fake.groupChat(appId, 3, new Date(T0).toISOString(), (i) => (['owner', 'admin', 'member'] as const)[i]!);
  const [owner, admin, member] = ids as [string, string, string];
  const events: ChatEvent[] = [];
  const clock = { ms: T0 };
  const sink: EventSink = { chatEvent: (_a, e) => void events.push(e), threadEvent: () => undefined, userEvent: () => undefined, membershipMoved: () => undefined };
  const make = () => new ChatActor(appId, chat.id, { store: fake.store, events: sink, now: () => new Date(clock.ms) });
  return { fake, appId, chat, owner, admin, member, events, clock, make };
}

t.test('a mute refuses sends, edits, reactions and typing until its expiry, from memory, and survives a reload', async (t) => {
  const { owner, admin, member, events, clock, make } = setup();
  const actor = make();
  t.ok(await actor.load());
  const sent = (await actor.send(member, { content: 'before' })) as SendResult;
  const until = new Date(T0 + 2000).toISOString();
  const mute = await actor.moderate({ kind: 'user', userId: admin }, { kind: 'mute', userId: member, expiresAt: until });
  t.match(mute, { userId: member, expiresAt: until, mutedBy: `user:${admin}` });
  t.match(events.at(-1), { type: 'member.muted', userId: member, expiresAt: until });
  const code = (r: unknown) => (r instanceof ApiError ? r.code : 'ok');
  t.equal(code(await actor.send(member, { content: 'no' })), 'USER_MUTED', 'send');
  t.equal(code(await actor.edit(member, sent.message.messageId, { content: 'no' })), 'USER_MUTED', 'edit');
  t.equal(code(await actor.react(member, sent.message.messageId, '👍', true)), 'USER_MUTED', 'reaction');
  t.equal(code(actor.typing(member, true)), 'USER_MUTED', 'typing');
  t.equal(code(await actor.deleteMessage(member, sent.message.messageId)), 'ok', 'a muted member deletes its own message');
  t.equal(code(await actor.send(owner, { content: 'others speak' })), 'ok');

  const reloaded = make();
  t.ok(await reloaded.load());
  t.equal(code(await reloaded.send(member, { content: 'after a reload' })), 'USER_MUTED', 'the mute is stored with the member');
  t.equal(code(await reloaded.setRole(owner, member, 'admin')), 'ok', 'a role change keeps it');
  t.equal(code(await reloaded.send(member, { content: 'promoted' })), 'USER_MUTED');
  clock.ms = T0 + 2000;
  t.equal(code(await reloaded.send(member, { content: 'at the expiry' })), 'ok', 'lifted at its expiry, with no write');
  t.same(reloaded.mutes({ kind: 'backend', keyId: 'k' }), [], 'and no longer listed');
});

t.test('a ban is announced to the banned member before its removal, and blocks adding it back', async (t) => {
  const { owner, admin, member, events, make } = setup();
  const actor = make();
  await actor.load();
  events.length = 0;
  t.match(await actor.moderate({ kind: 'backend', keyId: 'k1' }, { kind: 'ban', userId: member, reason: 'spam' }), { userId: member, reason: 'spam', bannedBy: 'apiKey:k1' });
  t.same(events.map((e) => e.type), ['member.banned', 'membership.changed'], 'banned, then removed');
  t.notOk(actor.isMember(member));
  t.equal(((await actor.addMembers(admin, [member], 'member')) as ApiError).code, 'MEMBER_BANNED');
  t.ok(await actor.moderate({ kind: 'user', userId: owner }, { kind: 'unban', userId: member }));
  t.equal(events.at(-1)?.type, 'member.unbanned');
  t.notOk((await actor.addMembers(admin, [member], 'member')) instanceof ApiError, 'added again once lifted');
});

t.test('who may moderate whom', async (t) => {
  const members = new Map<string, Member>(
    (['owner', 'admin', 'admin2', 'member'] as const).map((id) => [id, { appId: 'a', chatId: 'c', userId: id, role: id === 'owner' ? 'owner' : id.startsWith('admin') ? 'admin' : 'member', joinedAt: '', readSeq: 0 }]),
  );
  const may = (kind: 'group' | 'direct', by: string, target: string, change: 'mute' | 'ban' = 'mute') =>
    moderationRefusal(kind, members, by === 'backend' ? { kind: 'backend', keyId: 'k' } : { kind: 'user', userId: by }, { kind: change, userId: target }) === undefined;
  t.ok(may('group', 'owner', 'admin'), 'the owner on an admin');
  t.ok(may('group', 'admin', 'member'), 'an admin on a plain member');
  t.ok(may('group', 'admin', 'stranger', 'ban'), 'an admin bans a non-member ahead');
  t.notOk(may('group', 'admin', 'admin2'), 'not an admin on another admin');
  t.notOk(may('group', 'admin', 'owner'), 'nor on the owner');
  t.notOk(may('group', 'member', 'member'), 'a plain member on nobody');
  t.notOk(may('group', 'owner', 'owner'), 'nobody on itself');
  t.ok(may('group', 'backend', 'owner'), 'the backend on anyone');
  t.ok(may('direct', 'backend', 'member'), 'the backend mutes in a direct chat');
  t.notOk(may('direct', 'backend', 'member', 'ban'), 'a direct chat has no bans');
  t.notOk(may('direct', 'owner', 'member'), 'its members moderate nothing');
});
