import t from 'tap';
import { integration, startService, WsClient } from '../helpers/index.ts';

t.test('per-user limits: sends (REST and WebSocket together), REST requests, connections', async (t) => {
  const svc = await startService({ USER_SENDS_PER_SECOND: '5', USER_REQUESTS_PER_SECOND: '30' });
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chat = await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt);
  const chatId = chat.body.chatId as string;

  const ws = await WsClient.connect(svc.nodeUrl, alice.jwt);
  t.teardown(() => ws.close());
  const wsReplies = await Promise.all(Array.from({ length: 4 }, (_, i) => ws.request({ type: 'message.send', chatId, content: `ws ${i}` })));
  const httpReplies = await Promise.all(Array.from({ length: 4 }, (_, i) => it.node.post(`/api/messages/${chatId}`, { content: `http ${i}` }, alice.jwt)));
  const accepted = wsReplies.filter((r) => r.type === 'ack').length + httpReplies.filter((r) => r.status === 201).length;
  t.ok(accepted <= 5 && accepted >= 4, `at most 5 sends in the second across both transports (${accepted})`);
  const limitedHttp = httpReplies.find((r) => r.status === 429);
  const limitedWs = wsReplies.find((r) => r.type === 'error');
  t.ok(limitedHttp || limitedWs, 'the rest are refused');
  if (limitedHttp) {
    t.equal(limitedHttp.body.code, 'RATE_LIMITED');
    t.match(limitedHttp.headers.get('retry-after'), /^\d+$/);
  }
  if (limitedWs) t.equal(limitedWs.code, 'RATE_LIMITED');
  t.equal((await it.node.get('/api/chats', bob.jwt)).status, 200, "another user's budget is separate");

  const burst = await Promise.all(Array.from({ length: 40 }, () => it.node.get('/api/users/me', bob.jwt)));
  t.ok(burst.filter((r) => r.status === 429).length >= 10, 'REST requests past the per-user rate get 429');

  const sockets: WsClient[] = [];
  t.teardown(() => Promise.all(sockets.map((s) => s.close())));
  for (let i = 0; i < 16; i++) sockets.push(await WsClient.connect(svc.nodeUrl, bob.jwt));
  await t.rejects(WsClient.connect(svc.nodeUrl, bob.jwt), /429/, 'the 17th connection of one user is refused');
});
