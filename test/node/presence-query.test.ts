import t from 'tap';
import WebSocket from 'ws';
import { ChatClient } from 'chat-service/client';
import { integration, startService, WsClient } from '../helpers/index.ts';

// A presence snapshot (PROTOCOL.md, `presence.query`): a client that connects learns who is online
// now instead of waiting for each user's next change.
const svc = await startService();
t.teardown(() => svc.stop());

t.test('presence.query answers which of the named users are online now', async (t) => {
  const it = await integration(svc, 'presence-query');
  const [ann, ben, cat] = [await it.user('ann'), await it.user('ben'), await it.user('cat')];
  const benWs = await WsClient.connect(svc.nodeUrl, ben.jwt);
  const annWs = await WsClient.connect(svc.nodeUrl, ann.jwt);
  t.teardown(() => Promise.all([benWs.close(), annWs.close()]));
  const asked = await annWs.request({ type: 'presence.query', userIds: [ben.userId, cat.userId, ann.userId] });
  t.same(asked, { v: 1, type: 'ack', id: asked.id, result: { online: [ben.userId, ann.userId] } }, 'ben and ann are online, cat is not');
  await benWs.close();
  let online: string[] = [ben.userId];
  for (let i = 0; i < 50 && online.includes(ben.userId); i++) {
    online = (await annWs.request({ type: 'presence.query', userIds: [ben.userId] })).result.online as string[];
    if (online.length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.same(online, [], 'ben is offline once his socket closed');
  const tooMany = await annWs.request({ type: 'presence.query', userIds: Array.from({ length: 101 }, () => crypto.randomUUID()) });
  t.match(tooMany, { type: 'error', code: 'VALIDATION_FAILED' }, 'at most 100 users');
  t.match(tooMany.message, /^\/userIds: /, 'the frame field is named');
  t.match(await annWs.request({ type: 'presence.query', userIds: [] }), { type: 'error', code: 'VALIDATION_FAILED' }, 'at least one');

  const client = new ChatClient({ baseUrl: svc.nodeUrl, WebSocket: WebSocket as never });
  client.setAuth({ jwt: cat.jwt, refreshToken: cat.refreshToken, userId: cat.userId });
  await client.connect();
  t.teardown(() => client.close());
  t.same(await client.presence([ann.userId, ben.userId, cat.userId]), [ann.userId, cat.userId], 'ChatClient.presence');
});

t.test('presence queries count in the user’s write budget', async (t) => {
  const tight = await startService({ USER_WRITES_PER_SECOND: '2' });
  t.teardown(() => tight.stop());
  const it = await integration(tight, 'presence-budget');
  const ann = await it.user('ann');
  const ws = await WsClient.connect(tight.nodeUrl, ann.jwt);
  t.teardown(() => ws.close());
  const answers = [];
  for (let i = 0; i < 4; i++) answers.push(await ws.request({ type: 'presence.query', userIds: [ann.userId] }));
  t.same(answers.slice(0, 2).map((a) => a.type), ['ack', 'ack'], 'two a second are answered');
  t.match(answers.at(-1), { type: 'error', code: 'RATE_LIMITED' }, 'more are refused with a retry hint');
});
