import t from 'tap';
import { integration, WsClient } from '../helpers/index.ts';
import { onBothStores } from '../helpers/both-stores.ts';

// Mentions (README, "Mentions"): only members, at most 25; each mentioned member's mentionCount
// counts its unread mentioning messages until it reads them, and nobody else's moves.
await onBothStores(t, 'a mention is counted for the mentioned member only, until read; only members may be mentioned', async (t, svc) => {
  const it = await integration(svc, 'mentions');
  const [ann, ben, cat] = [await it.user('ann'), await it.user('ben'), await it.user('cat')];
  const outsider = await it.user('out');
  const chat = (await it.node.post('/api/chats', { type: 'group', name: 'team', memberIds: [ben.userId, cat.userId] }, ann.jwt)).body;
  const send = (body: object, jwt = ann.jwt) => it.node.post(`/api/messages/${chat.chatId}`, body, jwt);
  const counts = async () => Promise.all([ann, ben, cat].map(async (u) => (await it.node.get(`/api/chats/${chat.chatId}`, u.jwt)).body.mentionCount as number));

  const refused = await send({ content: 'hey', mentions: [ben.userId, outsider.userId] });
  t.equal(refused.status, 400, 'a mention of a non-member is refused');
  t.match(refused.body.errors, [{ path: '/body/mentions/1', message: 'not a member of this chat' }], 'naming the entry');
  const tooMany = await send({ content: 'all', mentions: Array.from({ length: 26 }, () => crypto.randomUUID()) });
  t.match(tooMany.body.errors, [{ path: '/body/mentions' }], 'more than 25 are refused, naming the field');
  t.equal((await send({ content: 'twice', mentions: [ben.userId, ben.userId] })).status, 400, 'each at most once');

  const ws = await WsClient.connect(svc.nodeUrl, cat.jwt);
  t.teardown(() => ws.close());
  const first = await send({ content: '@ben look', mentions: [ben.userId] });
  t.same(first.body.message.mentions, [ben.userId], 'the message carries its mentions');
  const live = await ws.waitFor((f) => f.type === 'message.new' && f.message.messageId === first.body.message.messageId);
  t.same(live.message.mentions, [ben.userId], 'and so does its event');
  const overWs = await ws.request({ type: 'message.send', chatId: chat.chatId, content: 'both of you', mentions: [ann.userId, ben.userId] });
  t.same(overWs.result.message.mentions, [ann.userId, ben.userId], 'a WebSocket send mentions too');
  t.match(await ws.request({ type: 'message.send', chatId: chat.chatId, content: 'x', mentions: [outsider.userId] }), { type: 'error', code: 'VALIDATION_FAILED', message: /^\/mentions\/0: not a member/ });
  await send({ content: 'no mention' }, cat.jwt);
  t.same(await counts(), [1, 2, 0], 'ann: the one from cat; ben: both; cat: none (its own messages are read)');
  const list = (await it.node.get('/api/chats', ben.jwt)).body.chats.find((c: { chatId: string }) => c.chatId === chat.chatId);
  t.equal(list.mentionCount, 2, 'the chat list shows it too');

  // Deleting a mentioning message stops it counting; reading clears the rest.
  await it.node.del(`/api/messages/${chat.chatId}/${first.body.message.messageId}`, ann.jwt);
  t.same(await counts(), [1, 1, 0], "a deleted message no longer counts for ben");
  const read = await it.node.post(`/api/chats/${chat.chatId}/read`, { seq: first.body.message.seq + 1 }, ben.jwt);
  t.equal(read.status, 200);
  t.same(await counts(), [1, 0, 0], 'ben read past both: cleared, and only for ben');
  const later = await send({ content: '@ben again', mentions: [ben.userId] }, cat.jwt);
  t.same(await counts(), [1, 1, 0], 'a new mention counts again');
  await it.node.get(`/api/messages/getMessages/${chat.chatId}?size=1`, ben.jwt);
  t.same((await counts())[1], 0, `history marks the newest read and clears it (seq ${later.body.message.seq})`);
});
