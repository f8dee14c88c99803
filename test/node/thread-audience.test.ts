import t from 'tap';
import { integration, WsClient, type Frame } from '../helpers/index.ts';
import { onBothStores } from '../helpers/both-stores.ts';

// Threads (README, "Threads"): a reply, and each change of it, goes to the members who follow its
// thread and to the connections that have it open; every member gets the parent's summary.
await onBothStores(t, 'a reply reaches followers and connections that have the thread open, the summary every member', async (t, svc) => {
  const it = await integration(svc, 'audience');
  const [ann, ben, cat, dan] = [await it.user('ann'), await it.user('ben'), await it.user('cat'), await it.user('dan')];
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'audience', memberIds: [ben.userId, cat.userId, dan.userId] }, ann.jwt)).body.chatId as string;
  const [a, b, c, d] = (await Promise.all([ann, ben, cat, dan].map((u) => WsClient.connect(svc.nodeUrl, u.jwt)))) as [WsClient, WsClient, WsClient, WsClient];
  t.teardown(() => Promise.all([a, b, c, d].map((s) => s.close())));
  const parent = (await a.request({ type: 'message.send', chatId, content: 'the plan' })).result.message;
  const open = (s: WsClient, parentId = parent.messageId, chat = chatId) => s.request({ type: 'thread.open', chatId: chat, parentId });
  const opened = await open(d);
  t.same([opened.type, opened.result.thread.following, opened.result.thread.lastSeq], ['ack', false, 0], 'dan opens the thread: his state in it comes with the ack');

  /** Frames each socket got up to a chat message sent after `action` (a marker every member gets, after it). */
  let markers = 0;
  const upToMarker = async (): Promise<Frame[][]> => {
    const content = `marker ${++markers}`;
    await a.request({ type: 'message.send', chatId, content });
    const sockets = [a!, b!, c!, d];
    await Promise.all(sockets.map((s) => s.waitFor((f) => f.type === 'message.new' && f.message.content === content)));
    return sockets.map((s) => {
      const at = s.frames.findIndex((f) => f.type === 'message.new' && f.message.content === content);
      const from = s.frames.findLastIndex((f, i) => i < at && f.type === 'message.new' && f.message.content === `marker ${markers - 1}`);
      return s.frames.slice(from + 1, at);
    });
  };
  const replies = (frames: Frame[]) => frames.filter((f) => f.type === 'thread.reply').map((f) => f.message.content as string);

  const r1 = (await b.request({ type: 'message.send', chatId, content: 'r1', parentId: parent.messageId })).result.message;
  let seen = await upToMarker();
  t.same(seen.map(replies), [['r1'], ['r1'], [], ['r1']], 'r1: to ann (the parent’s author follows), ben (replied) and dan (open); not to cat');
  t.ok(seen.every((frames) => frames.some((f) => f.type === 'thread.updated' && f.thread.replyCount === 1)), 'the summary to every member');

  await b.request({ type: 'message.edit', chatId, messageId: r1.messageId, content: 'r1 edited' });
  await b.request({ type: 'reaction.add', chatId, messageId: r1.messageId, reaction: '👍' });
  seen = await upToMarker();
  const changes = (frames: Frame[]) => frames.filter((f) => (f.type === 'message.edited' && f.message.messageId === r1.messageId) || (f.type === 'reaction.added' && f.reaction.messageId === r1.messageId)).map((f) => f.type as string);
  t.same(seen.map(changes), [['message.edited', 'reaction.added'], ['message.edited', 'reaction.added'], [], ['message.edited', 'reaction.added']], "the reply's edit and reaction: to the same members, not to cat");

  // Mentioned, cat follows; ben unfollows; dan closes the thread.
  t.equal((await it.node.del(`/api/chats/${chatId}/threads/${parent.messageId}/follow`, ben.jwt)).status, 200, 'ben unfollows');
  t.same((await d.request({ type: 'thread.close', chatId, parentId: parent.messageId })).type, 'ack', 'dan closes the thread');
  await a.request({ type: 'message.send', chatId, content: 'r2 for @cat', parentId: parent.messageId, mentions: [cat.userId] });
  seen = await upToMarker();
  t.same(seen.map(replies), [['r2 for @cat'], [], ['r2 for @cat'], []], 'r2: to ann and cat (mentioned, now following); not to ben (unfollowed) nor dan (closed)');

  // Two sockets of one user, one with the thread open: each gets the reply once.
  const c2 = await WsClient.connect(svc.nodeUrl, cat.jwt);
  t.teardown(() => c2.close());
  await open(c2);
  await a.request({ type: 'message.send', chatId, content: 'r3', parentId: parent.messageId });
  await upToMarker();
  await c2.waitFor((f) => f.type === 'message.new' && f.message.content === `marker ${markers}`);
  t.same([replies(c.frames).filter((x) => x === 'r3').length, replies(c2.frames).filter((x) => x === 'r3').length], [1, 1], "a follower's two sockets, one with the thread open: r3 once on each");

  // Limits and errors.
  const other = (await it.node.post('/api/chats', { type: 'group', name: 'not dan’s', memberIds: [ben.userId] }, ann.jwt)).body.chatId as string;
  t.match(await open(d, parent.messageId, other), { type: 'error', code: 'CHAT_NOT_FOUND' }, "a thread of a chat one is not in: CHAT_NOT_FOUND");
  t.match(await open(d, r1.messageId), { type: 'error', code: 'MESSAGE_NOT_FOUND' }, 'a reply is no thread: MESSAGE_NOT_FOUND');
  const parents = [];
  for (let i = 0; i < 20; i++) parents.push((await a.request({ type: 'message.send', chatId, content: `p${i}` })).result.message.messageId as string);
  for (const id of parents) t.equal((await open(d, id)).type, 'ack', `open ${id}`, { diagnostic: false });
  t.match(await open(d, parent.messageId), { type: 'error', code: 'OPEN_THREAD_LIMIT_REACHED' }, 'the 21st open thread: OPEN_THREAD_LIMIT_REACHED');
  t.equal((await open(d, parents[0])).type, 'ack', 'opening one already open is no new one');
  await t.rejects(WsClient.connect(svc.nodeUrl, dan.jwt, { threads: [`${chatId}:${parent.messageId}`] }), /upgrade refused: 400/, '?threads= names only chats that ?resume= names');
});
