import t from 'tap';
import type { ApplicationUsage as UsageBody } from '../../sdk/management.ts';
import { integration, startService, WsClient } from '../helpers/index.ts';

// README, "Usage": nodes count users, chats, messages, concurrent users and API-key use per
// application, add them to the store every USAGE_FLUSH_SECONDS, and the control service serves
// them at GET /api/client/apps/:appId/usage (and `lastUsedAt` in the key list).
const svc = await startService({ USAGE_FLUSH_SECONDS: '1' });
t.teardown(() => svc.stop());

const today = () => new Date().toISOString().slice(0, 10);

/** Reads the usage until `done` holds (figures arrive with the next flush), or fails after 10 s. */
async function usageWhen(app: Awaited<ReturnType<typeof integration>>, done: (u: UsageBody) => boolean): Promise<UsageBody> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await app.control.get(`/api/client/apps/${app.appId}/usage`, app.accessToken);
    if (r.status !== 200) throw new Error(`usage: ${r.status} ${r.text}`);
    const u = r.body as UsageBody;
    if (done(u) || Date.now() > deadline) return u;
    await new Promise((r) => setTimeout(r, 200));
  }
}

t.test('a new application has zero usage over the last 30 days, today last', async (t) => {
  const app = await integration(svc, 'usage-empty');
  const u = await usageWhen(app, () => true);
  t.equal(u.appId, app.appId);
  t.match(u, { registeredUsers: 0, chats: 0, messages: 0, concurrentUsers: { current: 0, peak: 0 } });
  t.equal(u.days.length, 30);
  t.equal(u.days.at(-1)!.day, today(), 'the last day is today (UTC)');
  t.equal(new Date(`${u.days[0]!.day}T00:00:00Z`).getTime(), new Date(`${today()}T00:00:00Z`).getTime() - 29 * 86_400_000, 'the first is 29 days before');
  t.ok(u.days.every((d) => d.messages === 0 && d.peakUsers === 0));
  const keys = await app.control.get(`/api/client/apps/${app.appId}/keys`, app.accessToken);
  t.equal(keys.body.keys[0].lastUsedAt, null, 'a key never used has lastUsedAt null');
});

t.test('usage matches what the integration did: users, chats, messages, concurrent users, key use', async (t) => {
  const app = await integration(svc, 'usage');
  const unused = await app.control.post(`/api/client/apps/${app.appId}/keys`, undefined, app.accessToken);
  const [alice, bob, carol] = [await app.user('alice'), await app.user('bob'), await app.user('carol')];
  t.equal((await app.node.del(`/api/users/${carol.userId}`, app.apiKey)).status, 204, 'one user deleted');
  const direct = await app.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt);
  t.equal(direct.status, 201);
  t.equal((await app.node.post('/api/chats', { type: 'direct', userId: alice.userId }, bob.jwt)).status, 200, 'the same direct chat again is not a new chat');
  const group = await app.node.post('/api/chats', { type: 'group', name: 'g', memberIds: [bob.userId] }, alice.jwt);
  t.equal(group.status, 201);
  t.equal((await app.node.del(`/api/chats/${group.body.chatId}`, alice.jwt)).status, 204, 'one chat deleted');
  const chatId = direct.body.chatId as string;
  for (const content of ['one', 'two']) t.equal((await app.node.post(`/api/messages/${chatId}`, { content }, alice.jwt)).status, 201);
  t.equal((await app.node.post(`/api/messages/${chatId}`, { content: 'three', idempotencyKey: 'k3' }, bob.jwt)).status, 201);
  t.equal((await app.node.post(`/api/messages/${chatId}`, { content: 'three', idempotencyKey: 'k3' }, bob.jwt)).status, 200, 'a retried send is not a new message');
  const ws = [await WsClient.connect(svc.nodeUrl, alice.jwt), await WsClient.connect(svc.nodeUrl, bob.jwt), await WsClient.connect(svc.nodeUrl, bob.jwt)];
  t.teardown(() => Promise.all(ws.map((w) => w.close())));
  t.match(await ws[0]!.request({ type: 'message.send', chatId, content: 'four' }), { type: 'ack' }, 'a send over WebSocket');

  const u = await usageWhen(app, (u) => u.messages === 4 && u.concurrentUsers.current === 2 && u.registeredUsers === 2 && u.chats === 1);
  t.match(u, { registeredUsers: 2, chats: 1, messages: 4, concurrentUsers: { current: 2, peak: 2 } }, 'two users left, one chat left, four messages, two users (three sockets) connected');
  t.same(u.days.at(-1), { day: today(), messages: 4, peakUsers: 2 }, "today's figures");
  t.equal(u.days.slice(0, -1).reduce((n, d) => n + d.messages, 0), 0, 'nothing on other days');

  const keys = (await app.control.get(`/api/client/apps/${app.appId}/keys`, app.accessToken)).body.keys as { id: string; lastUsedAt: string | null }[];
  const used = keys.find((k) => k.id !== unused.body.id)!;
  t.ok(used.lastUsedAt && Date.now() - Date.parse(used.lastUsedAt) < 30_000, `the key in use has a recent lastUsedAt (${used.lastUsedAt})`);
  t.equal(keys.find((k) => k.id === unused.body.id)!.lastUsedAt, null, 'the other key was never used');

  await Promise.all(ws.map((w) => w.close()));
  const after = await usageWhen(app, (u) => u.concurrentUsers.current === 0);
  t.match(after.concurrentUsers, { current: 0, peak: 2 }, 'once everyone left: nobody connected now, the peak stays');
});

t.test('usage is per account: another account gets 404, a bad id 400, no token 401', async (t) => {
  const mine = await integration(svc, 'usage-mine');
  const theirs = await integration(svc, 'usage-theirs');
  t.equal((await theirs.control.get(`/api/client/apps/${mine.appId}/usage`, theirs.accessToken)).status, 404);
  t.equal((await mine.control.get('/api/client/apps/not-a-uuid/usage', mine.accessToken)).status, 400);
  t.equal((await mine.control.get(`/api/client/apps/${mine.appId}/usage`)).status, 401);
});
