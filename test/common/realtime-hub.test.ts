import t from 'tap';
import { unpack } from 'msgpackr';
import { closeCodes, eventFrame, PROTOCOL_VERSION, type HubInterest } from '../../node/realtime/index.ts';
// The documented limits (not re-exported by the component's index).
import { REALTIME_LIMITS } from '../../node/realtime/limits.ts';
import { APP_ID, fakeNode, messageNew, removed, typing } from '../helpers/fake-uws.ts';

// The realtime hub over a fake uWS app: sockets are subscribed to topics as the gateway has the hub
// subscribe them, events are published, and each socket's frames are what its client would read.

const CHAT = 'chat-1';

/** A HubInterest that writes down what it is told, as `chat chat-1 true`. */
function recordedInterest() {
  const calls: string[] = [];
  const interest: HubInterest = {
    chat: (_appId, chatId, interested) => void calls.push(`chat ${chatId} ${interested}`),
    user: (_appId, userId, interested) => void calls.push(`user ${userId} ${interested}`),
  };
  /** The calls since the last look. */
  const since = () => calls.splice(0);
  return { interest, since };
}

t.test("typing reaches the other members' sockets and none of the typer's own connections, which miss nothing else", async (t) => {
  const { app, hub, connect } = fakeNode();
  const alice = [connect('alice', { chats: [CHAT] }), connect('alice', { chats: [CHAT], encoding: 'msgpack' })];
  const bob = [connect('bob', { chats: [CHAT] }), connect('bob', { chats: [CHAT], encoding: 'msgpack' })];
  hub.chatEvent(APP_ID, typing(CHAT, 'alice'));
  hub.chatEvent(APP_ID, messageNew(CHAT, 1));
  // The same, as frames that crossed the bus from another node arrive.
  hub.chatFrame(APP_ID, CHAT, eventFrame(typing(CHAT, 'alice', false)));
  hub.chatFrame(APP_ID, CHAT, eventFrame(messageNew(CHAT, 2)));
  app.drain();
  for (const [i, socket] of alice.entries()) t.same(socket.types(), ['ready', 'message.new:1', 'message.new:2'], `alice's connection ${i}: not told of her own typing`);
  for (const [i, socket] of bob.entries()) t.same(socket.types(), ['ready', 'typing.started', 'message.new:1', 'typing.stopped', 'message.new:2'], `bob's connection ${i}`);
});

t.test('a socket holding more than slowConsumerBytes at a check is closed with 4001 and gets nothing more; the others keep receiving', async (t) => {
  const { app, hub, connect } = fakeNode();
  const [slow, atLimit, fine] = [connect('alice', { chats: [CHAT] }), connect('bob', { chats: [CHAT] }), connect('carol', { chats: [CHAT] })];
  slow.bufferedAmount = REALTIME_LIMITS.slowConsumerBytes + 1;
  atLimit.bufferedAmount = REALTIME_LIMITS.slowConsumerBytes;
  hub.chatEvent(APP_ID, messageNew(CHAT, 1));
  hub.dropSlowConsumers();
  hub.chatEvent(APP_ID, messageNew(CHAT, 2));
  hub.userEvent(APP_ID, 'alice', { type: 'presence.online', userId: 'bob' });
  app.drain();
  const { reason, reconnect } = closeCodes.SLOW_CONSUMER;
  t.equal(slow.closedWith?.code, 4001, 'closed as a slow consumer');
  t.same(JSON.parse(slow.closedWith?.message ?? '{}'), { reason, reconnect }, 'with the reason and what to do');
  t.same(slow.types(), ['ready'], 'what was still queued on it is dropped: nothing follows the close frame');
  t.equal(hub.sockets(APP_ID, 'alice').size, 0, 'out of the hub');
  for (const socket of [atLimit, fine]) {
    t.equal(socket.closedWith, undefined, 'not past the limit: open');
    t.same(socket.types(), ['ready', 'message.new:1', 'message.new:2']);
  }
});

t.test('the slow-consumer check also runs after every slowConsumerCheckBytes handed to uWS, without the timer', async (t) => {
  const { app, hub, connect } = fakeNode();
  const [slow, fine] = [connect('alice', { chats: [CHAT] }), connect('bob', { chats: [CHAT] })];
  slow.bufferedAmount = REALTIME_LIMITS.slowConsumerBytes + 1;
  const content = 'x'.repeat(64 * 1024);
  const frameBytes = Buffer.byteLength(eventFrame(messageNew(CHAT, 1, content)));
  const toCheck = Math.ceil(REALTIME_LIMITS.slowConsumerCheckBytes / frameBytes);
  for (let seq = 1; seq < toCheck; seq++) hub.chatEvent(APP_ID, messageNew(CHAT, seq, content));
  t.equal(slow.closedWith, undefined, `open below ${REALTIME_LIMITS.slowConsumerCheckBytes} bytes sent`);
  for (let seq = toCheck; seq < toCheck + 2; seq++) hub.chatEvent(APP_ID, messageNew(CHAT, seq, content));
  app.drain();
  t.equal(slow.closedWith?.code, closeCodes.SLOW_CONSUMER.code, 'closed once that much was sent');
  t.equal(fine.types().length, 1 + toCheck + 1, 'the other socket got every event');
});

t.test('a send uWS drops (past maxBackpressure, uWS closes the socket) marks the socket slow: it is given no new chat', async (t) => {
  const { app, hub, connect } = fakeNode();
  const { interest, since } = recordedInterest();
  hub.interest = interest;
  const socket = connect('alice', { chats: [CHAT] });
  since();
  socket.sendResult = 2;
  hub.send(socket.ws, { type: 'ack', id: '1', result: {} });
  t.equal(socket.getUserData().slow, true, 'marked slow');
  hub.membershipMoved(APP_ID, 'chat-2', 'alice', true);
  t.same(since(), [], 'no interest in a chat for a socket on its way out');
  hub.chatEvent(APP_ID, messageNew('chat-2', 1));
  app.drain();
  t.same(socket.types(), ['ready']);
});

t.test("HubInterest is told of a chat and a user once as this node's first socket for it comes, once as the last goes", async (t) => {
  const { hub, connect } = fakeNode();
  const { interest, since } = recordedInterest();
  hub.interest = interest;
  const alice1 = connect('alice', { chats: [CHAT] });
  t.same(since(), ['user alice true', `chat ${CHAT} true`], 'the first socket');
  const alice2 = connect('alice', { chats: [CHAT] });
  const bob = connect('bob', { chats: [CHAT] });
  t.same(since(), ['user bob true'], 'a second socket of the user, and of the chat: nothing new');
  hub.membershipMoved(APP_ID, CHAT, 'bob', false);
  alice1.ws.end(1000);
  t.same(since(), [], 'a socket that is not the last one leaves the chat, then one that is not the last of its user closes');
  hub.membershipMoved(APP_ID, CHAT, 'alice', false);
  t.same(since(), [`chat ${CHAT} false`], 'the last socket in the chat leaves it');
  alice2.ws.end(1000);
  bob.ws.end(1000);
  t.same(since(), ['user alice false', 'user bob false'], "each user's last socket closes");
  const carol = connect('carol', { chats: [CHAT] });
  carol.bufferedAmount = REALTIME_LIMITS.slowConsumerBytes + 1;
  since();
  hub.dropSlowConsumers();
  t.same(since(), [`chat ${CHAT} false`, 'user carol false'], 'a slow consumer dropped: each ends once (unsubscribed, then closed)');
});

t.test("a member removed from a chat gets the chat's events up to its removal, even those still queued, and nothing after", async (t) => {
  const { app, hub, connect } = fakeNode();
  const [alice, bob] = [connect('alice', { chats: [CHAT] }), connect('bob', { chats: [CHAT] })];
  // As the actor gives them: the event that removes bob, then the move of his subscriptions. uWS
  // writes published frames when the loop iteration ends, so both are still queued on bob's socket
  // when it is unsubscribed: routed already, they are his.
  hub.chatEvent(APP_ID, messageNew(CHAT, 1));
  hub.chatEvent(APP_ID, removed(CHAT, 'bob'));
  hub.membershipMoved(APP_ID, CHAT, 'bob', false);
  hub.chatEvent(APP_ID, messageNew(CHAT, 2));
  app.drain();
  t.same(bob.types(), ['ready', 'message.new:1', 'membership.changed']);
  t.same(alice.types(), ['ready', 'message.new:1', 'membership.changed', 'message.new:2']);
  hub.membershipMoved(APP_ID, CHAT, 'bob', true);
  hub.chatEvent(APP_ID, messageNew(CHAT, 3));
  app.drain();
  t.same(bob.types().slice(3), ['message.new:3'], 'added again: what follows reaches him');
});

t.test('a socket not joined yet counts as interest but receives nothing; once joined, ready is its first frame', async (t) => {
  const { app, hub, connect } = fakeNode();
  const { interest, since } = recordedInterest();
  hub.interest = interest;
  const socket = connect('alice', { chats: [CHAT], joined: false });
  t.same(since(), ['user alice true', `chat ${CHAT} true`], 'the node starts hearing its user and chats');
  hub.chatEvent(APP_ID, messageNew(CHAT, 1));
  hub.userEvent(APP_ID, 'alice', { type: 'presence.online', userId: 'bob' });
  app.drain();
  t.same(socket.types(), [], 'no chat or user event before ready');
  hub.join(socket.ws);
  hub.send(socket.ws, { type: 'ready', connectionId: socket.getUserData().connId, userId: 'alice' });
  hub.chatEvent(APP_ID, messageNew(CHAT, 2));
  hub.userEvent(APP_ID, 'alice', { type: 'presence.offline', userId: 'bob' });
  app.drain();
  t.same(socket.types(), ['ready', 'message.new:2', 'presence.offline']);
});

t.test('each socket gets frames in its encoding; an event is encoded once per encoding, and only for encodings with a subscriber', async (t) => {
  const { app, hub, connect, eventsOut } = fakeNode();
  const json = connect('alice', { chats: [CHAT] });
  const packed = connect('bob', { chats: [CHAT], encoding: 'msgpack' });
  const published = () => app.published.splice(0).map((p) => (p.isBinary ? 'binary' : 'text'));
  published();
  const event = messageNew(CHAT, 1);
  hub.chatEvent(APP_ID, event);
  app.drain();
  const expected = { v: PROTOCOL_VERSION, ...event };
  t.same(json.frames[1], { data: Buffer.from(JSON.stringify(expected)), isBinary: false }, 'JSON as text');
  t.equal(packed.frames[1]?.isBinary, true, 'MessagePack as binary');
  t.same(unpack(packed.frames[1]!.data), expected);
  t.same(published(), ['text', 'binary'], 'one publication per encoding, not per socket');
  t.equal(eventsOut(), 2, 'two deliveries counted');
  packed.ws.end(1000);
  hub.chatEvent(APP_ID, messageNew(CHAT, 2));
  hub.chatFrame(APP_ID, CHAT, eventFrame(messageNew(CHAT, 3)));
  t.same(published(), ['text', 'text'], 'no MessagePack subscriber: nothing packed');
  json.ws.end(1000);
  hub.chatEvent(APP_ID, messageNew(CHAT, 4));
  hub.userEvent(APP_ID, 'alice', { type: 'presence.online', userId: 'bob' });
  t.same(published(), [], 'no subscriber: nothing encoded');
  t.equal(eventsOut(), 4);
});

t.test("a user's events reach every connection of the user, in its encoding, and no one else", async (t) => {
  const { app, hub, connect } = fakeNode();
  const alice = [connect('alice'), connect('alice', { encoding: 'msgpack' })];
  const bob = connect('bob');
  hub.userEvent(APP_ID, 'alice', { type: 'presence.online', userId: 'bob' });
  app.drain();
  for (const socket of alice) t.same(socket.received()[1], { v: PROTOCOL_VERSION, type: 'presence.online', userId: 'bob' });
  t.same(bob.types(), ['ready']);
});

t.test("a typer's connection closed as a slow consumer while its typing is published: the others get the typing, the typer's other connections keep the chat", async (t) => {
  const { app, hub, connect } = fakeNode();
  const [slowAlice, alice, bob] = [connect('alice', { chats: [CHAT] }), connect('alice', { chats: [CHAT] }), connect('bob', { chats: [CHAT] })];
  // Frames handed to uWS up to just below the next slow-consumer check, so that the typing frame
  // is the one that crosses it, in the middle of its publish.
  const typingBytes = Buffer.byteLength(eventFrame(typing(CHAT, 'alice')));
  hub.dropSlowConsumers(); // counts from here (none is slow yet)
  let left = REALTIME_LIMITS.slowConsumerCheckBytes;
  for (let seq = 1; left > typingBytes; seq++) {
    const bare = Buffer.byteLength(eventFrame(messageNew(CHAT, seq, '')));
    const size = Math.min(64 * 1024, left - typingBytes + 1 - bare);
    hub.chatEvent(APP_ID, messageNew(CHAT, seq, 'x'.repeat(Math.max(1, size))));
    left -= bare + Math.max(1, size);
  }
  t.ok(left > 0 && left <= typingBytes, `${left} bytes to the check: the typing frame crosses it`);
  app.drain();
  slowAlice.bufferedAmount = REALTIME_LIMITS.slowConsumerBytes + 1;
  t.doesNotThrow(() => hub.chatEvent(APP_ID, typing(CHAT, 'alice')), 'publishing the typing throws nothing');
  hub.chatEvent(APP_ID, messageNew(CHAT, 9999));
  app.drain();
  t.equal(slowAlice.closedWith?.code, closeCodes.SLOW_CONSUMER.code, 'the slow connection is closed');
  t.equal(bob.types().at(-2), 'typing.started', 'bob is told alice types');
  t.equal(alice.types().at(-1), 'message.new:9999', "alice's other connection still gets the chat's events");
});

/** The end of the current turn: held acks are written (process.nextTick), then the loop iteration ends. */
const turnEnds = () => new Promise((resolve) => setImmediate(resolve));

t.test("a socket's acks of one turn leave in one write, after the events published before them and before those published after", async (t) => {
  const { app, hub, connect } = fakeNode();
  const [alice, msgpack] = [connect('alice', { chats: [CHAT] }), connect('alice', { chats: [CHAT], encoding: 'msgpack' })];
  await turnEnds();
  app.drain();
  const before = [alice.writes, msgpack.writes];
  // As a chat's group commit resolves a batch: its events, then each send's ack.
  hub.chatEvent(APP_ID, messageNew(CHAT, 1));
  hub.chatEvent(APP_ID, messageNew(CHAT, 2));
  for (const id of ['s1', 's2', 's3']) {
    hub.ack(alice.ws, id, { seq: 1 });
    hub.ack(msgpack.ws, id, { seq: 1 });
  }
  t.same(alice.types(), ['ready'], 'nothing written before the turn ends');
  await turnEnds();
  app.drain();
  for (const [name, socket, i] of [['json', alice, 0], ['msgpack', msgpack, 1]] as const) {
    t.same(socket.types(), ['ready', 'message.new:1', 'message.new:2', 'ack', 'ack', 'ack'], `${name}: the events, then the acks`);
    t.same(socket.received().filter((f) => f.type === 'ack').map((f) => f.id), ['s1', 's2', 's3'], `${name}: the acks in order`);
    t.equal(socket.writes - before[i]!, 1, `${name}: two events and three acks in one socket write`);
  }
  // An ack held when an event is published goes out before it.
  hub.ack(alice.ws, 's4', {});
  hub.chatEvent(APP_ID, messageNew(CHAT, 3));
  hub.userEvent(APP_ID, 'alice', { type: 'presence.online', userId: 'bob' });
  await turnEnds();
  app.drain();
  t.same(alice.types().slice(6), ['ack', 'message.new:3', 'presence.online'], 'held ack, then what was published after it');
});

t.test('an ack held when a frame is sent to the socket, or when the server closes it, is written first', async (t) => {
  const { hub, connect } = fakeNode();
  const alice = connect('alice', { chats: [CHAT] });
  hub.ack(alice.ws, 's1', {});
  hub.send(alice.ws, { type: 'error', id: 's2', code: 'RATE_LIMITED', message: 'slow down' });
  t.same(alice.types(), ['ready', 'ack', 'error'], 'the ack, then the error');
  hub.ack(alice.ws, 's3', {});
  const { code, reason, reconnect } = closeCodes.TOKEN_EXPIRED;
  hub.end(alice.ws, code, JSON.stringify({ reason, reconnect }));
  t.same(alice.types(), ['ready', 'ack', 'error', 'ack'], 'the ack owed, then the close frame');
  t.equal(alice.closedWith?.code, code, 'closed');
  await turnEnds();
  t.same(alice.types().length, 4, 'nothing written to it once closed');
});
