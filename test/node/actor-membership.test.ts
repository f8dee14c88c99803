import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { ApiError } from '../../common/index.ts';
import { ChatActor } from '../../node/chat/actor.ts';
import type { ChatEvent, EventSink } from '../../node/chat/events.ts';
import type { Chat } from '../../node/store/index.ts';
import { MemoryNodeStore } from '../helpers/memory-node-store.ts';

// Membership through a chat's actor (chat-membership.ts) against a fake store: who may change it,
// what is stored, and what the members' sockets are told, in which order.

const NOW = '2030-01-01T00:00:00.000Z';

async function group(t: Test, members: number, outsiders = 0) {
  const fake = new MemoryNodeStore();
  const appId = randomUUID();
  const ids = Array.from({ length: members + outsiders }, () => randomUUID());
  for (const id of ids) fake.users.set(id, { appId, id, username: id, displayName: id, createdAt: NOW, updatedAt: NOW });
  const chat: Chat = { appId, id: randomUUID(), kind: 'group', name: 'G', createdBy: ids[0]!, createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW };
  // Joined a minute apart, in order: the first is the owner.
  const joined = (i: number) => new Date(Date.parse(NOW) + i * 60_000).toISOString();
  await fake.store.chats.create(chat, ids.slice(0, members).map((userId, i) => ({ appId, chatId: chat.id, userId, role: i === 0 ? 'owner' : 'member', joinedAt: joined(i), readSeq: 0 })));
  const events: ChatEvent[] = [];
  const moves: string[] = [];
  const sink: EventSink = { chatEvent: (_a, e) => void events.push(e), threadEvent: () => undefined, userEvent: () => undefined, membershipMoved: (_a, _c, userId, member) => void moves.push(`${member ? '+' : '-'}${userId}`) };
  const actor = new ChatActor(appId, chat.id, { store: fake.store, events: sink, now: () => new Date(NOW) });
  t.ok(await actor.load(), 'the chat loads');
  const stored = async () => (await fake.store.chats.get(appId, chat.id))!;
  return { fake, appId, chat, ids, events, moves, actor, stored };
}

const changes = (events: ChatEvent[]) => events.flatMap((e) => (e.type === 'membership.changed' ? [`${e.change}:${e.userId}${e.role ? `:${e.role}` : ''}`] : []));
const code = (r: unknown) => (r instanceof ApiError ? r.code : r);

t.test('adding: owners and admins of a group only; new members are stored, subscribed, announced and counted', async (t) => {
  const { actor, ids, events, moves, stored } = await group(t, 3, 2);
  const [owner, member, , outA, outB] = ids;
  t.equal(code(await actor.addMembers(member!, [outA!], 'member')), 'NOT_ALLOWED', 'a plain member adds nobody');
  t.equal(code(await actor.addMembers(outA!, [outB!], 'member')), 'CHAT_NOT_FOUND', 'a non-member learns nothing');
  t.equal(code(await actor.addMembers(owner!, [outA!], 'owner')), 'NOT_ALLOWED', 'nobody is added as a second owner');
  t.equal(code(await actor.addMembers(owner!, [randomUUID()], 'member')), 'USER_NOT_FOUND', 'an unknown user is refused');
  t.same(events, [], 'no refusal announced anything');
  const added = await actor.addMembers(owner!, [outA!, outB!, outA!, member!], 'admin');
  t.same((added as { userId: string }[]).map((m) => m.userId), [outA, outB], 'each new user once; a member already in is left alone');
  t.same(changes(events), [`added:${outA}:admin`, `added:${outB}:admin`], 'each addition announced with its role');
  t.same(moves, [`+${outA}`, `+${outB}`], "the new members' sockets join the chat");
  t.equal((await stored()).memberCount, 5, "the chat row's member count follows");
  t.equal(actor.role(outB!), 'admin');
});

t.test("removing: an admin removes plain members only; the owner's leaving hands the chat to the longest-standing admin", async (t) => {
  const { actor, ids, events, moves, stored } = await group(t, 4);
  const [owner, a, b, c] = ids;
  await actor.setRole(owner!, c!, 'admin');
  await actor.setRole(owner!, b!, 'admin');
  t.equal(code(await actor.setRole(b!, a!, 'admin')), 'NOT_ALLOWED', 'only the owner changes roles');
  t.equal(code(await actor.removeMember(b!, c!)), 'NOT_ALLOWED', 'an admin does not remove another admin');
  t.equal(code(await actor.removeMember(a!, b!)), 'NOT_ALLOWED', 'a plain member removes nobody else');
  t.equal(await actor.removeMember(b!, a!), true, 'an admin removes a plain member');
  t.notOk(actor.isMember(a!));
  events.length = 0;
  moves.length = 0;
  t.equal(await actor.removeMember(owner!, owner!), true, 'the owner leaves');
  t.same(changes(events), [`role:${b}:owner`, `removed:${owner}`], 'b, the admin who joined first, becomes owner before the owner goes');
  t.same(moves, [`-${owner}`], "the leaver's sockets leave the chat, after it was told");
  t.equal(actor.role(b!), 'owner');
  t.equal((await stored()).memberCount, 2, 'two members left');
});
