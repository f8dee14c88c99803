import t from 'tap';
import type { Logger } from '../../common/index.ts';
import { channelOf, MemoryBroker, MemoryBus, type BusTopic } from '../../node/bus/index.ts';
import { ClusterEvents } from '../../node/cluster/index.ts';
import type { ChatEvent } from '../../node/chat/index.ts';
import { APP_ID, fakeNode, messageNew, removed, typing } from '../helpers/fake-uws.ts';

// Cluster nodes in one process: each a hub over a fake uWS app, its ClusterEvents told of the hub's
// interest, over one in-memory broker. Events an actor gives one node reach the sockets of another.

const CHAT = 'chat-1';
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => quiet } as unknown as Logger;

/** A node; `members` is what its store says (`chatId/userId`), which a membership from the bus must match. */
function clusterNode(broker: MemoryBroker, nodeId: string, members = new Set<string>()) {
  const node = fakeNode();
  const verify = { isMember: async (_appId: string, chatId: string, userId: string) => members.has(`${chatId}/${userId}`), userExists: async () => true };
  const events = new ClusterEvents(new MemoryBus(broker, { nodeId }), node.hub, quiet, () => undefined, verify);
  node.hub.interest = events;
  return { ...node, events, members };
}

/** Past the end of this turn (where a node's outbox leaves) and the bus's deliveries. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

t.test("a node listens to a chat's and a user's bus topics exactly while one of its sockets needs them", async (t) => {
  const broker = new MemoryBroker();
  const node = clusterNode(broker, 'b');
  const listening = (topic: BusTopic) => broker.subscribers(channelOf('', topic));
  const chat: BusTopic = { kind: 'chat', appId: APP_ID, chatId: CHAT };
  const user: BusTopic = { kind: 'user', appId: APP_ID, userId: 'alice' };
  const first = node.connect('alice', { chats: [CHAT] });
  const second = node.connect('alice', { chats: [CHAT] });
  t.same([listening(chat), listening(user)], [1, 1], 'two sockets: the node subscribed once to each');
  first.ws.end(1000);
  t.same([listening(chat), listening(user)], [1, 1], 'one left: still listening');
  second.ws.end(1000);
  t.same([listening(chat), listening(user)], [0, 0], 'none left: unsubscribed from both');
});

t.test("a member removed on the chat's node gets the chat's events up to its removal on every node, and nothing after", async (t) => {
  const broker = new MemoryBroker();
  const [owner, other] = [clusterNode(broker, 'a'), clusterNode(broker, 'b')];
  const [bob, carol] = [other.connect('bob', { chats: [CHAT] }), other.connect('carol', { chats: [CHAT] })];
  // The actor on the owner's node: a message, bob's removal, the move of his subscriptions, then a
  // message he must not get. The chat's events of this turn are still in the owner's outbox when
  // the move is told: they must cross the bus before it, or bob's node unsubscribes him first.
  owner.events.chatEvent(APP_ID, messageNew(CHAT, 1));
  owner.events.chatEvent(APP_ID, removed(CHAT, 'bob'));
  owner.events.membershipMoved(APP_ID, CHAT, 'bob', false);
  owner.events.chatEvent(APP_ID, messageNew(CHAT, 2));
  await settle();
  other.app.drain();
  t.same(bob.types(), ['ready', 'message.new:1', 'membership.changed']);
  t.same(carol.types(), ['ready', 'message.new:1', 'membership.changed', 'message.new:2']);
});

t.test("typing that crosses the bus reaches the other members' sockets there, and none of the typer's", async (t) => {
  const broker = new MemoryBroker();
  const [here, there] = [clusterNode(broker, 'a'), clusterNode(broker, 'b')];
  const typer = here.connect('alice', { chats: [CHAT] });
  const [aliceThere, bob] = [there.connect('alice', { chats: [CHAT], encoding: 'msgpack' }), there.connect('bob', { chats: [CHAT] })];
  here.events.chatEvent(APP_ID, typing(CHAT, 'alice'));
  here.events.chatEvent(APP_ID, messageNew(CHAT, 1));
  await settle();
  here.app.drain();
  there.app.drain();
  t.same(typer.types(), ['ready', 'message.new:1'], 'the typing connection');
  t.same(aliceThere.types(), ['ready', 'message.new:1'], 'her connection on the other node');
  t.same(bob.types(), ['ready', 'typing.started', 'message.new:1']);
});

t.test("a membership from the bus widens a socket's chats only once the node's store holds it; a leave narrows at once", async (t) => {
  const broker = new MemoryBroker();
  const [owner, other] = [clusterNode(broker, 'a'), clusterNode(broker, 'b')];
  const bob = other.connect('bob');
  owner.events.membershipMoved(APP_ID, CHAT, 'bob', true);
  await settle();
  owner.events.chatEvent(APP_ID, messageNew(CHAT, 1));
  await settle();
  other.members.add(`${CHAT}/bob`);
  owner.events.membershipMoved(APP_ID, CHAT, 'bob', true);
  await settle();
  owner.events.chatEvent(APP_ID, messageNew(CHAT, 2));
  await settle();
  // The store still holds him: the leave is not checked.
  owner.events.membershipMoved(APP_ID, CHAT, 'bob', false);
  owner.events.chatEvent(APP_ID, messageNew(CHAT, 3));
  await settle();
  other.app.drain();
  t.same(bob.types(), ['ready', 'message.new:2'], 'not subscribed on an unconfirmed membership; subscribed on a confirmed one; unsubscribed on a leave');
});

t.test("a thread's event crosses the bus after its summary, at the summary's revision: followers and openers there get it once, the other members only the summary", async (t) => {
  const broker = new MemoryBroker();
  const [owner, other] = [clusterNode(broker, 'a'), clusterNode(broker, 'b')];
  const follower = other.connect('ann', { chats: [CHAT] });
  const followerOpen = other.connect('ann', { chats: [CHAT] });
  const member = other.connect('cat', { chats: [CHAT] });
  const opener = other.connect('dan', { chats: [CHAT] });
  const outsider = other.connect('eve');
  t.equal(other.hub.openThread(followerOpen.ws, CHAT, 'p1', 20), 'opened', "one of ann's sockets has the thread open");
  t.equal(other.hub.openThread(opener.ws, CHAT, 'p1', 20), 'opened', 'dan has it open');
  t.equal(other.hub.openThread(outsider.ws, CHAT, 'p1', 20), 'not-member', 'a socket not in the chat cannot open it');
  const { message } = messageNew(CHAT, 1) as Extract<ChatEvent, { type: 'message.new' }>;
  const summary: ChatEvent = { type: 'thread.updated', chatId: CHAT, seq: 1, rev: 5, parentId: 'p1', thread: { replyCount: 1, lastReplyAt: message.timeStamp, participants: ['ann'] } };
  const reply = (rev: number): ChatEvent => ({ type: 'thread.reply', chatId: CHAT, parentId: 'p1', seq: rev, rev, message: { ...message, parentId: 'p1' } });
  owner.events.chatEvent(APP_ID, summary);
  owner.events.threadEvent(APP_ID, 'p1', ['ann', 'eve'], reply(5));
  // An older one (a paused writer's backlog): below what the node's sockets were sent.
  owner.events.chatEvent(APP_ID, messageNew(CHAT, 6));
  owner.events.threadEvent(APP_ID, 'p1', ['ann'], reply(4));
  await settle();
  other.app.drain();
  t.same(follower.types(), ['ready', 'thread.updated:1', 'thread.reply:5', 'message.new:6'], 'a follower: the summary, then the reply at its revision');
  t.same(followerOpen.types(), ['ready', 'thread.updated:1', 'thread.reply:5', 'message.new:6'], "the follower's socket with the thread open: once");
  t.same(opener.types(), ['ready', 'thread.updated:1', 'thread.reply:5', 'message.new:6'], 'a member with the thread open');
  t.same(member.types(), ['ready', 'thread.updated:1', 'message.new:6'], 'another member: the summary only');
  t.same(outsider.types(), ['ready'], 'a follower the bus names whose socket is not in the chat: nothing');
});
