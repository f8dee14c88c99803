import t from 'tap';
import { integration, startService, WsClient } from '../helpers/index.ts';

t.test('chat users through the API key: register, sign in, get, update, delete', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const node = it.node;

  const created = await node.post('/api/users', { username: 'alice.smith', displayName: 'Alice' }, it.apiKey);
  t.equal(created.status, 201);
  t.match(created.body, { userId: String, username: 'alice.smith', displayName: 'Alice', createdAt: String, updatedAt: String });
  const dup = await node.post('/api/users', { username: 'alice.smith' }, it.apiKey);
  t.equal(dup.status, 409);
  t.equal(dup.body.code, 'USERNAME_TAKEN');
  t.equal((await node.post('/api/users', { username: 'has space' }, it.apiKey)).status, 400);
  t.equal((await node.post('/api/users', { username: 'x', extra: 1 }, it.apiKey)).status, 400);

  const byName = await node.post('/api/users/signin', { username: 'alice.smith' }, it.apiKey);
  t.equal(byName.status, 200);
  t.match(byName.body, { jwt: String, refreshToken: String, userId: created.body.userId, expiresIn: 900 });
  const byId = await node.post('/api/users/signin', { userId: created.body.userId }, it.apiKey);
  t.equal(byId.status, 200);
  t.equal((await node.post('/api/users/signin', { userId: '00000000-0000-4000-8000-000000000000' }, it.apiKey)).status, 404);

  const me = await node.get('/api/users/me', byId.body.jwt);
  t.equal(me.status, 200);
  t.equal(me.body.userId, created.body.userId);
  t.equal((await node.get(`/api/users/${created.body.userId}`, it.apiKey)).body.username, 'alice.smith');
  const renamed = await node.put(`/api/users/${created.body.userId}`, { displayName: 'Alice S.' }, it.apiKey);
  t.equal(renamed.status, 200);
  t.equal(renamed.body.displayName, 'Alice S.');

  // The API key and the user JWT never stand in for each other.
  t.equal((await node.get('/api/users/me', it.apiKey)).status, 401);
  t.equal((await node.post('/api/users', { username: 'bob' }, byId.body.jwt)).status, 401);
  t.equal((await node.post('/api/users', { username: 'bob' })).status, 401);

  // Deleting a user ends its sign-ins, closes its sockets (4500) and frees the username.
  const ws = await WsClient.connect(svc.nodeUrl, byId.body.jwt);
  t.equal((await node.del(`/api/users/${created.body.userId}`, it.apiKey)).status, 204);
  const closed = await ws.waitClosed();
  t.equal(closed.code, 4500);
  t.equal((await node.get(`/api/users/${created.body.userId}`, it.apiKey)).status, 404);
  t.equal((await node.post('/api/users/refresh', { refreshToken: byId.body.refreshToken })).status, 401);
  t.equal((await node.post('/api/users', { username: 'alice.smith' }, it.apiKey)).status, 201);
});

t.test('user refresh tokens rotate; a reused one ends the sign-in', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const alice = await it.user('alice');
  const first = await it.node.post('/api/users/refresh', { refreshToken: alice.refreshToken });
  t.equal(first.status, 200);
  t.not(first.body.refreshToken, alice.refreshToken);
  t.equal(first.body.userId, alice.userId);
  t.equal((await it.node.get('/api/users/me', first.body.jwt)).status, 200);
  const second = await it.node.post('/api/users/refresh', { refreshToken: first.body.refreshToken });
  t.equal(second.status, 200);
  const reused = await it.node.post('/api/users/refresh', { refreshToken: alice.refreshToken });
  t.equal(reused.status, 401);
  t.equal(reused.body.code, 'REFRESH_TOKEN_REUSED');
  const after = await it.node.post('/api/users/refresh', { refreshToken: second.body.refreshToken });
  t.equal(after.status, 401, 'the whole sign-in ended');
  t.equal((await it.node.post('/api/users/refresh', { refreshToken: 'urt_garbage' })).status, 401);
  t.equal((await it.node.post('/api/users/refresh', {})).status, 400);
  // Another sign-in of the same user is unaffected.
  const other = await it.node.post('/api/users/signin', { userId: alice.userId }, it.apiKey);
  t.equal((await it.node.post('/api/users/refresh', { refreshToken: other.body.refreshToken })).status, 200);
});

t.test('presence: online and offline reach users who share a chat, once', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [alice, bob, stranger] = [await it.user('alice'), await it.user('bob'), await it.user('stranger')];
  await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt);
  await it.node.post('/api/chats', { type: 'group', name: 'two chats in common', memberIds: [bob.userId] }, alice.jwt);
  const b = await WsClient.connect(svc.nodeUrl, bob.jwt);
  const s = await WsClient.connect(svc.nodeUrl, stranger.jwt);
  t.teardown(() => Promise.all([b.close(), s.close()]));
  const a1 = await WsClient.connect(svc.nodeUrl, alice.jwt);
  await b.waitFor((f) => f.type === 'presence.online' && f.userId === alice.userId);
  const a2 = await WsClient.connect(svc.nodeUrl, alice.jwt);
  await a1.close();
  await a2.close();
  await b.waitFor((f) => f.type === 'presence.offline' && f.userId === alice.userId);
  t.equal(b.frames.filter((f) => f.type === 'presence.online' && f.userId === alice.userId).length, 1, 'online once, though two chats and two sockets');
  t.equal(b.frames.filter((f) => f.type === 'presence.offline' && f.userId === alice.userId).length, 1, 'offline once, when the last socket closed');
  t.equal(s.frames.filter((f) => f.type.startsWith('presence.') && f.userId === alice.userId).length, 0, 'nothing to a user who shares no chat');
});
