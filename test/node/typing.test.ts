import t from 'tap';
import { integration, startService, WsClient } from '../helpers/index.ts';

// Typing indicators go to the chat's other members only: the typer hears nothing of its own, on
// any of its connections, while the others hear it in order with the chat's events.
const svc = await startService();
t.teardown(() => svc.stop());

t.test('a member is not told of its own typing, on any of its connections; the others are', async (t) => {
  const it = await integration(svc, 'typing');
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'typing', memberIds: [bob.userId] }, alice.jwt)).body.chatId as string;
  const [a1, a2, b] = await Promise.all([WsClient.connect(svc.nodeUrl, alice.jwt), WsClient.connect(svc.nodeUrl, alice.jwt, { encoding: 'msgpack' }), WsClient.connect(svc.nodeUrl, bob.jwt)]);
  t.teardown(() => Promise.all([a1.close(), a2.close(), b.close()]));

  t.equal((await a1.request({ type: 'typing.start', chatId })).type, 'ack');
  t.match(await b.waitFor((f) => f.type === 'typing.started'), { chatId, userId: alice.userId }, 'bob hears alice typing');
  t.equal((await a1.request({ type: 'typing.stop', chatId })).type, 'ack');
  await b.waitFor((f) => f.type === 'typing.stopped');
  await it.node.post(`/api/messages/${chatId}`, { content: 'after typing' }, alice.jwt);
  for (const [name, ws] of [['the socket that typed', a1], ['her other socket (MessagePack)', a2]] as const) {
    await ws.waitFor((f) => f.type === 'message.new' && f.message.content === 'after typing');
    t.same(ws.frames.filter((f) => f.type.startsWith('typing.')), [], `${name} got no typing event of hers before the next message`);
  }

  t.equal((await b.request({ type: 'typing.start', chatId })).type, 'ack');
  for (const ws of [a1, a2]) t.match(await ws.waitFor((f) => f.type === 'typing.started'), { userId: bob.userId }, 'alice hears bob on both');
  await it.node.post(`/api/messages/${chatId}`, { content: 'bob done' }, bob.jwt);
  await b.waitFor((f) => f.type === 'message.new' && f.message.content === 'bob done');
  t.same(b.frames.filter((f) => f.type === 'typing.started').map((f) => f.userId), [alice.userId], 'bob heard only alice');
});
