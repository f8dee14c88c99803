import t from 'tap';
import { integration, startService, WsClient, type ChatUserSession, type Frame } from '../helpers/index.ts';

/*
 * End to end: an integrator's backend (API key) registers and signs in users; they connect over
 * WebSocket, create a group and a direct chat, and exchange messages, replies, edits, deletes,
 * reactions, typing and read marks. Every member receives each event exactly once, in the order the
 * actions were acknowledged (PROTOCOL.md: "Delivered to the members of the chat, each event once per
 * socket, in the order the chat produced them" — the actor included, nothing excludes it); a
 * non-member receives nothing and gets 400 from getMessages.
 */

/** Frames that are events of a chat (acks, errors and `ready` carry no top-level chatId). */
const CHAT_EVENTS = new Set([
  'message.new',
  'message.edited',
  'message.deleted',
  'reaction.added',
  'reaction.removed',
  'typing.started',
  'typing.stopped',
  'read.updated',
  'membership.changed',
  'chat.updated',
  'chat.deleted',
]);
const isChatEvent = (f: Frame) => CHAT_EVENTS.has(f.type);
const eventsOf = (c: WsClient, chatId: string) => c.frames.filter((f) => isChatEvent(f) && f.chatId === chatId);

/** One comparable line per event: its type, seq and the identity of what it is about. */
function describeEvent(f: Frame): string {
  switch (f.type) {
    case 'message.new':
    case 'message.edited':
    case 'message.deleted':
      return `${f.type}#${f.seq}:${f.message?.messageId}`;
    case 'reaction.added':
    case 'reaction.removed':
      return `${f.type}#${f.seq}:${f.reaction?.reactionId}`;
    case 'typing.started':
    case 'typing.stopped':
      return `${f.type}:${f.userId}`;
    case 'read.updated':
      return `${f.type}#${f.seq}:${f.userId}`;
    case 'membership.changed':
      return `${f.type}:${f.userId}:${f.change}:${f.role ?? ''}`;
    default:
      return `${f.type}:${JSON.stringify(f)}`;
  }
}

/** Dedup key of an event carrying a seq: (type, seq, messageId / reactionId / userId). */
const seqKey = (f: Frame) => `${f.type}|${f.seq}|${f.message?.messageId ?? f.reaction?.reactionId ?? f.userId}`;

const MESSAGE_KEYS = ['chatId', 'timeStamp', 'messageId', 'senderId', 'content', 'edited', 'editedAt', 'replyTo', 'reactions', 'reactionCounts', 'ownReactions', 'type', 'data', 'seq', 'deleted', 'deletedAt'];
const REPLY_KEYS = ['chatId', 'timeStamp', 'messageId', 'senderId', 'content', 'edited', 'editedAt'];
const REACTION_KEYS = ['chatId', 'createdAt', 'messageId', 'reaction', 'reactionId', 'senderId'];
const isIsoTime = (s: unknown) => typeof s === 'string' && !Number.isNaN(Date.parse(s)) && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s);
const sortedKeys = (o: object) => Object.keys(o).sort();

t.test('three users chat over WebSocket: every member gets each event once and in order, a non-member nothing', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const it = await integration(svc, 'e2e');

  // The integrator's backend registers and signs in the users with its API key.
  const alice = await it.user('alice');
  const bob = await it.user('bob');
  const carol = await it.user('carol');
  const dave = await it.user('dave');
  for (const u of [alice, bob, carol, dave]) t.ok(u.jwt && u.userId, `${u.username} signed in`);

  // Everyone connects before the chats exist (carol speaks MessagePack, the others JSON).
  const a = await WsClient.connect(svc.nodeUrl, alice.jwt);
  const b = await WsClient.connect(svc.nodeUrl, bob.jwt);
  const c = await WsClient.connect(svc.nodeUrl, carol.jwt, { encoding: 'msgpack' });
  const d = await WsClient.connect(svc.nodeUrl, dave.jwt);
  const sockets = [a, b, c, d];
  t.teardown(async () => {
    for (const s of sockets) s.dropWaiters();
    await Promise.all(sockets.map((s) => s.close()));
  });
  const name = new Map<WsClient, string>([[a, 'alice'], [b, 'bob'], [c, 'carol'], [d, 'dave']]);
  const userOf = new Map<WsClient, string>([[a, alice.userId], [b, bob.userId], [c, carol.userId], [d, dave.userId]]);
  /** What `ws` should get of a chat's events: all of them but its own typing (nobody is told of that). */
  const expectedFor = (ws: WsClient, chatId: string) => expected.get(chatId)!.filter((line) => !(line.startsWith('typing.') && line.endsWith(`:${userOf.get(ws)}`)));

  // Expected chat events, in the order the actions were acknowledged, per chat.
  const expected = new Map<string, string[]>();
  const expect = (chatId: string, line: string) => {
    if (!expected.has(chatId)) expected.set(chatId, []);
    expected.get(chatId)!.push(line);
  };

  /** Sends an action and requires its ack (fails with the error frame otherwise). */
  const act = async (ws: WsClient, action: Record<string, unknown>): Promise<Frame> => {
    const reply = await ws.request(action);
    if (reply.type !== 'ack') throw new Error(`${name.get(ws)} ${String(action.type)} got ${JSON.stringify(reply)}`);
    return reply;
  };

  // ---- chats, created over REST by the browser (user JWT) ---------------------------------------
  const group = await it.node.post('/api/chats', { type: 'group', name: 'Trio', memberIds: [bob.userId, carol.userId] }, alice.jwt);
  t.equal(group.status, 201, 'group created');
  const G = group.body.chatId as string;
  expect(G, `membership.changed:${alice.userId}:added:owner`);
  expect(G, `membership.changed:${bob.userId}:added:member`);
  expect(G, `membership.changed:${carol.userId}:added:member`);
  const direct = await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt);
  t.equal(direct.status, 201, 'direct chat created');
  const D = direct.body.chatId as string;
  expect(D, `membership.changed:${alice.userId}:added:member`);
  expect(D, `membership.changed:${bob.userId}:added:member`);

  const members = new Map<string, WsClient[]>([[G, [a, b, c]], [D, [a, b]]]);
  const seqOf = new Map<string, number>([[G, 0], [D, 0]]);

  const send = async (ws: WsClient, chatId: string, content: string, replyTo?: string) => {
    const ack = await act(ws, { type: 'message.send', chatId, content, ...(replyTo ? { replyTo } : {}) });
    const m = ack.result.message;
    const next = seqOf.get(chatId)! + 1;
    seqOf.set(chatId, next);
    t.equal(m.seq, next, `${name.get(ws)}'s "${content}" gets seq ${next}`);
    t.equal(ack.result.created, true);
    expect(chatId, `message.new#${m.seq}:${m.messageId}`);
    return m as Record<string, any>;
  };
  const reactionIdIn = (m: any, senderId: string, reaction: string) => {
    const r = (m.reactions as any[]).find((x) => x.senderId === senderId && x.reaction === reaction);
    if (!r) throw new Error(`no ${reaction} by ${senderId} in ${JSON.stringify(m)}`);
    return r.reactionId as string;
  };

  // ---- the conversation, every action awaited to its ack ---------------------------------------
  const g1 = await send(a, G, 'hello group');
  const g2 = await send(b, G, 'hi alice');
  const d1 = await send(a, D, 'psst bob');
  const g3 = await send(c, G, 'welcome!', g1.messageId);
  t.same(sortedKeys(g3.replyTo), sortedKeys({ chatId: 1, timeStamp: 1, messageId: 1, senderId: 1, content: 1, edited: 1 }), 'the ack carries replyTo flattened');
  const d2 = await send(b, D, 'hey');

  await act(a, { type: 'typing.start', chatId: G });
  expect(G, `typing.started:${alice.userId}`);
  const g4 = await send(a, G, 'typo mesage');
  await act(a, { type: 'typing.stop', chatId: G });
  expect(G, `typing.stopped:${alice.userId}`);

  const edited = (await act(a, { type: 'message.edit', chatId: G, messageId: g4.messageId, content: 'typo message (fixed)' })).result.message;
  t.match(edited, { messageId: g4.messageId, seq: g4.seq, content: 'typo message (fixed)', edited: true });
  t.ok(isIsoTime(edited.editedAt), 'the edit ack has editedAt');
  expect(G, `message.edited#${g4.seq}:${g4.messageId}`);

  await act(b, { type: 'typing.start', chatId: D });
  expect(D, `typing.started:${bob.userId}`);
  await act(b, { type: 'typing.stop', chatId: D });
  expect(D, `typing.stopped:${bob.userId}`);
  const d3 = await send(b, D, "what's up?", d1.messageId);

  const g5 = await send(b, G, 'nice fix', g4.messageId);
  t.match(g5.replyTo, { messageId: g4.messageId, content: 'typo message (fixed)', edited: true, editedAt: edited.editedAt }, 'a reply to an edited message shows its edited state');

  const thumbs = reactionIdIn((await act(b, { type: 'reaction.add', chatId: G, messageId: g1.messageId, reaction: '👍' })).result.message, bob.userId, '👍');
  expect(G, `reaction.added#${g1.seq}:${thumbs}`);
  const heart = reactionIdIn((await act(c, { type: 'reaction.add', chatId: G, messageId: g1.messageId, reaction: '❤️' })).result.message, carol.userId, '❤️');
  expect(G, `reaction.added#${g1.seq}:${heart}`);
  const fire = reactionIdIn((await act(a, { type: 'reaction.add', chatId: D, messageId: d3.messageId, reaction: '🔥' })).result.message, alice.userId, '🔥');
  expect(D, `reaction.added#${d3.seq}:${fire}`);
  const removed = (await act(c, { type: 'reaction.remove', chatId: G, messageId: g1.messageId, reaction: '❤️' })).result.message;
  t.same(removed.reactions.map((r: any) => r.reactionId), [thumbs], 'the removal ack shows only the remaining reaction');
  expect(G, `reaction.removed#${g1.seq}:${heart}`);

  const g6 = await send(b, G, 'oops, wrong chat');
  const wow = reactionIdIn((await act(c, { type: 'reaction.add', chatId: G, messageId: g6.messageId, reaction: '😮' })).result.message, carol.userId, '😮');
  expect(G, `reaction.added#${g6.seq}:${wow}`);
  // The owner deletes bob's message: a tombstone that keeps its seq, with no content or reactions.
  const tomb = (await act(a, { type: 'message.delete', chatId: G, messageId: g6.messageId })).result.message;
  t.match(tomb, { messageId: g6.messageId, seq: g6.seq, senderId: bob.userId, content: '', deleted: true, reactions: [] }, 'the delete ack is the tombstone');
  t.ok(isIsoTime(tomb.deletedAt), 'the tombstone has deletedAt');
  expect(G, `message.deleted#${g6.seq}:${g6.messageId}`);

  // Read marks.
  // bob sent g6 himself: a send moves its sender's read mark, so his is there already, and marking
  // it again moves nothing and announces nothing. A mark before it never moves it back.
  t.same((await act(b, { type: 'read.mark', chatId: G, seq: g6.seq })).result, { readSeq: g6.seq });
  t.same((await act(b, { type: 'read.mark', chatId: G, seq: g1.seq })).result, { readSeq: g6.seq });
  t.same((await act(c, { type: 'read.mark', chatId: G, seq: g5.seq })).result, { readSeq: g5.seq });
  expect(G, `read.updated#${g5.seq}:${carol.userId}`);
  t.same((await act(a, { type: 'read.mark', chatId: D, seq: d3.seq })).result, { readSeq: d3.seq });
  expect(D, `read.updated#${d3.seq}:${alice.userId}`);

  // Non-members are refused history (400) and cannot act in the chats either.
  for (const [who, chatId, label] of [[dave, G, 'dave/group'], [dave, D, 'dave/direct'], [carol, D, 'carol/direct']] as [ChatUserSession, string, string][]) {
    const res = await it.node.get(`/api/messages/getMessages/${chatId}?size=50&lastMessage=`, who.jwt);
    t.equal(res.status, 400, `getMessages ${label}: 400`);
    t.equal(res.body?.code, 'CHAT_NOT_ACCESSIBLE', `getMessages ${label}: CHAT_NOT_ACCESSIBLE`);
  }
  const intruder = await d.request({ type: 'message.send', chatId: G, content: 'let me in' });
  t.equal(intruder.type, 'error', 'a non-member cannot send');
  const peek = await c.request({ type: 'typing.start', chatId: D });
  t.equal(peek.type, 'error', 'carol cannot type into the direct chat');

  // Final markers in both chats: a leaking socket would receive them.
  const g7 = await send(a, G, 'marker G');
  const d4 = await send(b, D, 'marker D');

  // ---- what each socket received ---------------------------------------------------------------
  for (const [chatId, clients] of members) {
    const last = chatId === G ? g7 : d4;
    for (const ws of clients) {
      await ws.waitFor((f) => f.type === 'message.new' && f.chatId === chatId && f.message?.messageId === last.messageId, 5000);
      await ws.waitForCount((f) => isChatEvent(f) && f.chatId === chatId, expectedFor(ws, chatId).length, 5000);
    }
  }
  // Barrier: a ping's ack is queued behind anything already published to that socket, so after it
  // every frame the node meant for the socket (a duplicate, a leak) has arrived. Then a short quiet
  // period for good measure.
  for (const ws of sockets) t.equal((await ws.request({ type: 'ping' })).type, 'ack');
  await new Promise((resolve) => setTimeout(resolve, 150));

  for (const [chatId, clients] of members) {
    const label = chatId === G ? 'group' : 'direct';
    const lastSeq = seqOf.get(chatId)!;
    for (const ws of clients) {
      const want = expectedFor(ws, chatId);
      const who = `${name.get(ws)} (${label})`;
      const got = eventsOf(ws, chatId);
      const withSeq = got.filter((f) => typeof f.seq === 'number');
      const keys = withSeq.map(seqKey);
      t.same(keys.filter((k, i) => keys.indexOf(k) !== i), [], `${who}: no event with a seq received twice`);
      const news = got.filter((f) => f.type === 'message.new').map((f) => f.seq as number);
      t.same(news, Array.from({ length: lastSeq }, (_, i) => i + 1), `${who}: message.new seqs are 1..${lastSeq}, increasing, no gaps`);
      t.same(got.map(describeEvent), want, `${who}: exactly the expected events, once each, in ack order`);
      t.notOk(got.some((f) => f.replay), `${who}: nothing marked as a replay`);
    }
  }

  // Typing and read marks reach the other members; a read mark reaches its maker too, typing does not.
  t.ok(eventsOf(c, G).some((f) => f.type === 'typing.started' && f.userId === alice.userId), 'carol sees alice typing');
  t.ok(eventsOf(b, G).some((f) => f.type === 'typing.stopped' && f.userId === alice.userId), 'bob sees alice stop typing');
  t.ok(eventsOf(a, D).some((f) => f.type === 'typing.started' && f.userId === bob.userId), 'alice sees bob typing in the direct chat');
  t.ok(eventsOf(a, G).some((f) => f.type === 'read.updated' && f.userId === carol.userId && f.seq === g5.seq), "alice sees carol's read mark");
  t.notOk(eventsOf(a, G).some((f) => f.type === 'read.updated' && f.userId === bob.userId), "bob's mark, moved by his own sends, is not announced");
  t.ok(eventsOf(b, D).some((f) => f.type === 'read.updated' && f.userId === alice.userId && f.seq === d3.seq), "bob sees alice's read mark");

  // Event payloads: the same message state as the acks, in the documented shapes.
  const bobG = eventsOf(b, G);
  const carolG = eventsOf(c, G);
  t.same(bobG.find((f) => f.type === 'message.new' && f.seq === g3.seq)!.message, g3, 'message.new carries the acked message (JSON)');
  t.same(carolG.find((f) => f.type === 'message.new' && f.seq === g3.seq)!.message, g3, 'message.new carries the acked message (MessagePack)');
  const replyEvent = bobG.find((f) => f.type === 'message.new' && f.seq === g3.seq)!.message;
  t.same(sortedKeys(replyEvent.replyTo), ['chatId', 'content', 'edited', 'messageId', 'senderId', 'timeStamp'], 'live replyTo is flattened');
  // The answer to the writer also says which values it reacted with; the event every member shares does not.
  const shared = ({ ownReactions, ...m }: Record<string, unknown>) => (t.ok(Array.isArray(ownReactions), 'the answer names its own reactions'), m);
  t.same(bobG.find((f) => f.type === 'message.edited')!.message, shared(edited), 'message.edited carries the new state');
  t.same(bobG.find((f) => f.type === 'message.deleted')!.message, shared(tomb), 'message.deleted carries the tombstone');
  for (const f of bobG.filter((x) => x.type.startsWith('reaction.'))) {
    t.same(sortedKeys(f.reaction), REACTION_KEYS, `${f.type} carries a §2.5 reaction`);
    t.equal(f.reaction.chatId, G);
  }
  const heartAdded = bobG.find((f) => f.type === 'reaction.added' && f.reaction.reactionId === heart)!;
  t.match(heartAdded.reaction, { messageId: g1.messageId, senderId: carol.userId, reaction: '❤️' });
  t.same(bobG.find((f) => f.type === 'reaction.removed')!.reaction, heartAdded.reaction, 'reaction.removed names the reaction that was added');

  // Non-members: carol got nothing of the direct chat, dave nothing of any chat.
  t.same(eventsOf(c, D), [], 'carol received no event of the direct chat');
  t.notOk(JSON.stringify(c.frames).includes(D), 'carol never saw the direct chat id');
  t.same(d.frames.filter(isChatEvent), [], 'dave received no chat event');
  t.same([...new Set(d.frames.map((f) => f.type))].sort(), ['ack', 'error', 'ready'], 'dave got only his ready, acks and error');
  t.notOk(JSON.stringify(d.frames).includes(G) || JSON.stringify(d.frames).includes(D), 'dave never saw a chat id');
  for (const ws of sockets) t.notOk(ws.closed, `${name.get(ws)}'s socket stayed open`);

  // ---- history as bob sees it: the final state ---------------------------------------------------
  const history = await it.node.get(`/api/messages/getMessages/${G}?size=50&lastMessage=`, bob.jwt);
  t.equal(history.status, 200);
  const list = history.body.messages as any[];
  t.same(list.map((m) => m.seq), [7, 6, 5, 4, 3, 2, 1], 'every message, newest first');
  const bySeq = new Map(list.map((m) => [m.seq as number, m]));
  for (const m of list) {
    t.ok(sortedKeys(m).every((k) => MESSAGE_KEYS.includes(k)), `seq ${m.seq}: only documented Message fields`);
    t.equal(m.chatId, G);
    t.ok(isIsoTime(m.timeStamp), `seq ${m.seq}: timeStamp`);
    for (const r of m.reactions) t.same(sortedKeys(r), REACTION_KEYS, `seq ${m.seq}: reactions have the §2.5 fields`);
    if (m.replyTo) {
      t.ok(sortedKeys(m.replyTo).every((k) => REPLY_KEYS.includes(k)), `seq ${m.seq}: replyTo has only the flattened fields`);
      t.notOk('replyTo' in m.replyTo || 'reactions' in m.replyTo, `seq ${m.seq}: no nested replyTo or reactions`);
    }
  }
  const h1 = bySeq.get(1)!;
  t.match(h1, { messageId: g1.messageId, senderId: alice.userId, content: 'hello group', edited: false, deleted: false });
  t.notOk('editedAt' in h1 || 'replyTo' in h1, 'seq 1: never edited, replies to nothing');
  const thumbsAdded = bobG.find((f) => f.type === 'reaction.added' && f.reaction.reactionId === thumbs)!.reaction;
  t.ok(isIsoTime(thumbsAdded.createdAt), 'reaction createdAt');
  t.same(h1.reactions, [{ reactionId: thumbs, chatId: G, messageId: g1.messageId, senderId: bob.userId, reaction: '👍', createdAt: thumbsAdded.createdAt }], "seq 1: bob's 👍 only (carol's ❤️ removed), as announced");
  t.match(bySeq.get(2), { messageId: g2.messageId, senderId: bob.userId, content: 'hi alice', edited: false, deleted: false, reactions: [] });
  const h3 = bySeq.get(3)!;
  t.same(h3.replyTo, { chatId: G, timeStamp: g1.timeStamp, messageId: g1.messageId, senderId: alice.userId, content: 'hello group', edited: false }, 'seq 3: replyTo flattened');
  const h4 = bySeq.get(4)!;
  t.match(h4, { messageId: g4.messageId, senderId: alice.userId, content: 'typo message (fixed)', edited: true, deleted: false, editedAt: edited.editedAt });
  t.ok(Date.parse(h4.editedAt) >= Date.parse(h4.timeStamp), 'seq 4: editedAt is not before the message');
  t.same(bySeq.get(5)!.replyTo, { chatId: G, timeStamp: g4.timeStamp, messageId: g4.messageId, senderId: alice.userId, content: 'typo message (fixed)', edited: true, editedAt: edited.editedAt }, 'seq 5: replyTo shows the edited state');
  const h6 = bySeq.get(6)!;
  t.same(h6, { chatId: G, timeStamp: g6.timeStamp, messageId: g6.messageId, senderId: bob.userId, content: '', edited: false, reactions: [], reactionCounts: {}, ownReactions: [], type: 'regular', seq: 6, deleted: true, deletedAt: tomb.deletedAt }, 'seq 6: the documented tombstone');
  t.match(bySeq.get(7), { messageId: g7.messageId, content: 'marker G' });

  const directHistory = await it.node.get(`/api/messages/getMessages/${D}?size=50&lastMessage=`, bob.jwt);
  t.equal(directHistory.status, 200);
  const dList = directHistory.body.messages as any[];
  t.same(dList.map((m) => m.messageId), [d4.messageId, d3.messageId, d2.messageId, d1.messageId], 'direct chat history, newest first');
  t.same(dList[1].replyTo, { chatId: D, timeStamp: d1.timeStamp, messageId: d1.messageId, senderId: alice.userId, content: 'psst bob', edited: false });
  t.same(dList[1].reactions.map((r: any) => [r.reactionId, r.senderId, r.reaction]), [[fire, alice.userId, '🔥']]);
});
