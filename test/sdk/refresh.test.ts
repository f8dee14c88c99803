import t from 'tap';
import WebSocket from 'ws';
import { ChatClient, type UserSession, type WebSocketConstructor } from 'chat-service/client';
import { ChatServer } from 'chat-service/server';
import { ManagementClient } from 'chat-service/management';
import { freePort, startService } from '../helpers/index.ts';

t.test('a JWT expiring during a session is invisible: refreshed in time, no action fails', async (t) => {
  // JWTs live 6 s here; the client refreshes 2 s before expiry. The session runs for ~14 s.
  const env = { USER_JWT_TTL_SECONDS: '6', CONTROL_PORT: String(await freePort()), NODE_PORT: String(await freePort()) };
  const svc = await startService(env);
  t.teardown(() => svc.stop());
  const mgmt = new ManagementClient({ baseUrl: svc.controlUrl });
  await mgmt.register({ companyName: 'Refresh', email: `refresh-${process.pid}-${Date.now()}@example.com`, password: 'refresh-password' });
  const app = await mgmt.createApplication('refresh');
  const server = new ChatServer({ baseUrl: svc.nodeUrl, apiKey: (await mgmt.createApiKey(app.id)).token });
  const [alice, bob] = [await server.registerUser({ username: 'alice' }), await server.registerUser({ username: 'bob' })];

  const persisted: UserSession[] = [];
  const client = new ChatClient({ baseUrl: svc.nodeUrl, WebSocket: WebSocket as unknown as WebSocketConstructor, refreshMarginSeconds: 2, onTokens: (s) => persisted.push(s) });
  client.setAuth(await server.signIn({ userId: alice.userId }));
  t.teardown(() => client.close());
  await client.connect();
  const chat = await client.directChat(bob.userId);

  const failures: unknown[] = [];
  const deadline = Date.now() + 14_000;
  let actions = 0;
  while (Date.now() < deadline) {
    // REST and realtime both, so both paths must keep working across expiries.
    await Promise.all([
      client.send(chat.chatId, `m${actions}`).catch((e: unknown) => failures.push(e)),
      client.getMessages(chat.chatId, { size: 1 }).catch((e: unknown) => failures.push(e)),
      client.listChats().catch((e: unknown) => failures.push(e)),
    ]);
    actions += 3;
    await new Promise((r) => setTimeout(r, 250));
  }
  t.same(failures, [], `no action failed (${actions} actions)`);
  t.ok(persisted.length >= 2, `the app was given each new token pair (${persisted.length} refreshes)`);
  t.equal(new Set(persisted.map((s) => s.refreshToken)).size, persisted.length, 'every refresh rotated the refresh token');

  // A 401 is repaired too: the client holds a JWT it believes fresh (exp an hour away) that the
  // server refuses, so the first call gets 401, refreshes once and is retried.
  const session = await server.signIn({ userId: bob.userId });
  const [header, , signature] = session.jwt.split('.');
  const forged = `${header}.${Buffer.from(JSON.stringify({ sub: bob.userId, exp: Math.floor(Date.now() / 1000) + 3600 })).toString('base64url')}.${signature}`;
  let refreshed = 0;
  const viaRefresh = new ChatClient({ baseUrl: svc.nodeUrl, onTokens: () => refreshed++ });
  viaRefresh.setAuth({ ...session, jwt: forged });
  const chats = await viaRefresh.listChats();
  t.equal(refreshed, 1, 'one refresh after the 401');
  t.equal(chats.chats.length, 1, 'the call succeeded after a refresh triggered by the 401');

  // Single flight: ten calls refused at once share one refresh.
  let shared = 0;
  const many = new ChatClient({ baseUrl: svc.nodeUrl, onTokens: () => shared++ });
  const again = await server.signIn({ userId: bob.userId });
  many.setAuth({ ...again, jwt: forged });
  const results = await Promise.all(Array.from({ length: 10 }, () => many.listChats()));
  t.equal(results.length, 10);
  t.equal(shared, 1, 'one refresh for ten concurrent 401s');
});
