import t from 'tap';
import { integration, WsClient } from '../helpers/index.ts';
import { onBothStores } from '../helpers/both-stores.ts';

// Pins (README, "Pins"): a group's owners and admins pin and unpin, at most 50 per chat; members
// list them and are told of each change; a deleted message is unpinned with it.
await onBothStores(t, 'a pinned message is listed, announced and unpinned; at most 50; members do not pin a group', async (t, svc) => {
  const it = await integration(svc, 'pins');
  const [ann, ben] = [await it.user('ann'), await it.user('ben')];
  const chat = (await it.node.post('/api/chats', { type: 'group', name: 'pins', memberIds: [ben.userId] }, ann.jwt)).body;
  const pins = `/api/chats/${chat.chatId}/pins`;
  const send = async (content: string) => (await it.node.post(`/api/messages/${chat.chatId}`, { content }, ann.jwt)).body.message;
  const ws = await WsClient.connect(svc.nodeUrl, ben.jwt);
  t.teardown(() => ws.close());

  const quoted = await send('the question');
  const first = (await it.node.post(`/api/messages/${chat.chatId}`, { content: 'the plan', replyTo: quoted.messageId }, ann.jwt)).body.message;
  const pinned = await it.node.post(pins, { messageId: first.messageId }, ann.jwt);
  t.equal(pinned.status, 200);
  t.match(pinned.body.pin, { messageId: first.messageId, pinnedBy: ann.userId, pinnedAt: String });
  const event = await ws.waitFor((f) => f.type === 'message.pinned');
  t.same(event.pin, pinned.body.pin, 'members are told (message.pinned)');
  t.same((await it.node.post(pins, { messageId: first.messageId }, ann.jwt)).body.pin, pinned.body.pin, 'pinning again changes nothing');
  const listed = await it.node.get(pins, ben.jwt);
  t.same(listed.body.pins.map((p: { messageId: string; message: { content: string } }) => [p.messageId, p.message.content]), [[first.messageId, 'the plan']], 'members list it, with the message');
  t.equal(listed.body.pins[0].message.replyTo?.content, 'the question', 'and the message it quotes');

  const refused = await it.node.post(pins, { messageId: first.messageId }, ben.jwt);
  t.same([refused.status, refused.body.code], [403, 'NOT_ALLOWED'], 'a plain member of a group does not pin');
  t.equal((await it.node.del(`${pins}/${first.messageId}`, ben.jwt)).status, 403, 'nor unpin');
  await it.node.put(`/api/chats/${chat.chatId}/members/${ben.userId}`, { role: 'admin' }, ann.jwt);
  const overWs = await ws.request({ type: 'pin.add', chatId: chat.chatId, messageId: (await send('second')).messageId });
  t.match(overWs.result.pin, { pinnedBy: ben.userId }, 'an admin pins, over WebSocket too');

  t.equal((await it.node.del(`${pins}/${first.messageId}`, ann.jwt)).status, 204, 'unpinned');
  t.match(await ws.waitFor((f) => f.type === 'message.unpinned' && f.messageId === first.messageId), { unpinnedBy: ann.userId }, 'announced (message.unpinned)');
  t.equal((await it.node.del(`${pins}/${first.messageId}`, ann.jwt)).status, 204, 'unpinning again is no error');
  t.equal((await it.node.get(pins, ann.jwt)).body.pins.length, 1, 'the other pin stays');

  // At most 50; a deleted message is unpinned with it.
  for (let i = 2; i <= 50; i++) t.equal((await it.node.post(pins, { messageId: (await send(`m${i}`)).messageId }, ann.jwt)).status, 200, `pin ${i}`, { diagnostic: false });
  const full = await it.node.post(pins, { messageId: (await send('one too many')).messageId }, ann.jwt);
  t.same([full.status, full.body.code], [409, 'PIN_LIMIT_REACHED'], 'the 51st is refused');
  const all = (await it.node.get(pins, ann.jwt)).body.pins as { messageId: string; message: { content: string } }[];
  t.equal(all.length, 50);
  t.equal(all[0]!.message.content, 'm50', 'the newest pin first');
  await it.node.del(`/api/messages/${chat.chatId}/${all[0]!.messageId}`, ann.jwt);
  const unpinned = await ws.waitFor((f) => f.type === 'message.unpinned' && f.messageId === all[0]!.messageId);
  t.same([unpinned.chatId, unpinned.unpinnedBy], [chat.chatId, undefined], 'deleting a pinned message unpins it (no unpinnedBy)');
  t.equal((await it.node.get(pins, ann.jwt)).body.pins.length, 49);
  const deleted = await send('gone');
  await it.node.del(`/api/messages/${chat.chatId}/${deleted.messageId}`, ann.jwt);
  t.same((await it.node.post(pins, { messageId: deleted.messageId }, ann.jwt)).body.code, 'MESSAGE_DELETED', 'a deleted message is not pinned');

  const direct = (await it.node.post('/api/chats', { type: 'direct', userId: ben.userId }, ann.jwt)).body;
  const note = (await it.node.post(`/api/messages/${direct.chatId}`, { content: 'address' }, ann.jwt)).body.message;
  t.equal((await it.node.post(`/api/chats/${direct.chatId}/pins`, { messageId: note.messageId }, ben.jwt)).status, 200, 'either member pins in a direct chat');
  t.equal((await it.node.get(`/api/chats/${direct.chatId}/pins`, (await it.user('out')).jwt)).status, 404, 'a non-member sees no pins');
});
