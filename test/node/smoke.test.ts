import t from 'tap';
import { integration, startService, WsClient } from '../helpers/index.ts';

t.test('a message sent over WebSocket is acked and delivered to both members once', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chat = await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt);
  t.equal(chat.status, 201);
  const a = await WsClient.connect(svc.nodeUrl, alice.jwt);
  const b = await WsClient.connect(svc.nodeUrl, bob.jwt, { encoding: 'msgpack' });
  t.teardown(() => Promise.all([a.close(), b.close()]));
  const ack = await a.request({ type: 'message.send', chatId: chat.body.chatId, content: 'hi' });
  t.equal(ack.type, 'ack');
  t.equal(ack.result.message.seq, 1);
  const got = await b.waitFor((f) => f.type === 'message.new');
  t.equal(got.message.content, 'hi');
  t.equal(b.frames.filter((f) => f.type === 'message.new').length, 1);
});
