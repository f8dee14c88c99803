import t from 'tap';
import { integration, socketFate, startService, WsClient } from '../helpers/index.ts';

// Sessions end with their application and their user (README, Security): once an application is
// deleted its users' JWTs, refresh tokens and sockets are refused within a second; a deleted
// user's JWT opens no socket.
const svc = await startService();
t.teardown(() => svc.stop());

const fateOf = (jwt: string) => socketFate(svc.nodeUrl, jwt);

t.test("deleting an application ends its users' sessions: JWTs, refresh tokens and sockets", async (t) => {
  const it = await integration(svc, 'doomed');
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chatId = (await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt)).body.chatId as string;
  const ws = await WsClient.connect(svc.nodeUrl, alice.jwt);
  t.teardown(() => ws.close());
  t.equal((await ws.request({ type: 'message.send', chatId, content: 'before' })).type, 'ack', 'working before the deletion');
  // Another application of another account stays untouched.
  const other = await integration(svc, 'bystander');
  const carol = await other.user('carol');

  t.equal((await it.control.del(`/api/client/apps/${it.appId}`, it.accessToken)).status, 204);
  const deletedAt = Date.now();
  const closed = await ws.waitClosed();
  t.equal(closed.code, 4501, 'the open socket is closed with 4501');
  t.match(JSON.parse(closed.reason), { reason: 'application deleted', reconnect: 'never' });
  t.ok(Date.now() - deletedAt < 1000, `within a second (${Date.now() - deletedAt} ms)`);

  const send = await it.node.post(`/api/messages/${chatId}`, { content: 'after' }, alice.jwt);
  t.equal(send.status, 401, 'a JWT of the deleted application sends nothing');
  t.equal(send.body.code, 'TOKEN_INVALID');
  t.equal((await it.node.get('/api/chats', bob.jwt)).status, 401, 'nor reads');
  const refresh = await it.node.post('/api/users/refresh', { refreshToken: bob.refreshToken });
  t.equal(refresh.status, 401, 'its refresh tokens are refused');
  t.equal(refresh.body.code, 'REFRESH_TOKEN_INVALID');
  t.equal(await fateOf(bob.jwt), 'closed 4501', 'a new socket of the deleted application is closed with 4501');
  t.equal((await other.node.get('/api/chats', carol.jwt)).status, 200, "another application's users are unaffected");
});

t.test("a deleted user's JWT opens no socket, and its refresh token is refused", async (t) => {
  const it = await integration(svc, 'users');
  const dave = await it.user('dave');
  t.equal((await it.node.del(`/api/users/${dave.userId}`, it.apiKey)).status, 204);
  t.equal(await fateOf(dave.jwt), 'closed 4500', 'a socket opened with it is closed with 4500 (user deleted)');
  t.equal((await it.node.post('/api/users/refresh', { refreshToken: dave.refreshToken })).status, 401);
});
