import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t, { type Test } from 'tap';
import { client, newAccount, nodeScript, removeDir, startService } from '../helpers/index.ts';
import { assertProblem } from '../helpers/problem.ts';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

const svc = await startService({ LOGIN_MAX_PER_ADDRESS: '10000' });
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});
const api = client(svc.controlUrl);
const node = client(svc.nodeUrl);

async function account() {
  const res = await api.post('/api/auth/register', newAccount('apps'));
  if (res.status !== 201) throw new Error(`register failed: ${res.text}`);
  return res.body.accessToken as string;
}

async function createApp(token: string, name = 'My app') {
  const res = await api.post('/api/client/apps', { name }, token);
  if (res.status !== 201) throw new Error(`create app failed: ${res.text}`);
  return res.body as { id: string; name: string; updatedAt: string };
}

/** The operator CLI against the running service's store. */
const ctl = (...args: string[]) => run(process.execPath, [...nodeScript('control/cli.ts'), ...args], { cwd: ROOT, env: { ...process.env, DATA_DIR: svc.dataDir } });

const whoami = (apiKey: string) => node.get('/api/server/whoami', apiKey);

/** A revoked key is refused with 401 API_KEY_INVALID, its detail saying why. */
async function assertRevoked(t: Test, apiKey: string, label: string) {
  const res = await whoami(apiKey);
  assertProblem(t, res, 401, 'API_KEY_INVALID', label);
  t.match(res.body.detail, /revoked/, `${label}: says revoked`);
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('applications: create, get, list, update, delete with the forms of spec §2.2', async (t) => {
  const token = await account();
  const created = await api.post('/api/client/apps', { name: 'Shop chat' }, token);
  t.equal(created.status, 201);
  t.same(Object.keys(created.body).sort(), ['clientId', 'clusterId', 'createdAt', 'id', 'name', 'status', 'tier', 'updatedAt'], 'the create form has no type');
  t.match(created.body, { id: UUID, clientId: UUID, clusterId: UUID, name: 'Shop chat', status: 'ACTIVE', tier: 'DEMO', createdAt: ISO, updatedAt: ISO });
  const profile = await api.get('/api/client/profile', token);
  t.equal(created.body.clientId, profile.body.id, 'clientId is the owning account');

  const detail = await api.get(`/api/client/apps/${created.body.id}`, token);
  t.equal(detail.status, 200);
  t.same(Object.keys(detail.body).sort(), ['clientId', 'clusterEndpoint', 'clusterId', 'clusterName', 'clusterStatus', 'createdAt', 'id', 'name', 'status', 'tier', 'type', 'updatedAt']);
  t.match(detail.body, { ...created.body, type: 'DEMO', clusterName: String, clusterStatus: 'ACTIVE' });
  t.equal(detail.body.clusterEndpoint, svc.nodeUrl, 'clusterEndpoint is the public URL of the node');

  const second = await createApp(token, 'Second');
  const list = await api.get('/api/client/apps', token);
  t.equal(list.status, 200);
  t.same(Object.keys(list.body), ['applications']);
  t.same(list.body.applications.map((a: { id: string }) => a.id), [created.body.id, second.id], 'oldest first');
  t.same(list.body.applications[0], detail.body, 'list entries are the detail form');

  const renamed = await api.put(`/api/client/apps/${second.id}`, { name: 'Renamed' }, token);
  t.equal(renamed.status, 200);
  t.equal(renamed.body.name, 'Renamed');
  t.equal(renamed.body.clusterEndpoint, svc.nodeUrl, 'update answers with the detail form');
  t.ok(renamed.body.updatedAt >= second.updatedAt);
  t.equal((await api.get(`/api/client/apps/${second.id}`, token)).body.name, 'Renamed');

  const key = await api.post(`/api/client/apps/${second.id}/keys`, undefined, token);
  t.equal((await whoami(key.body.token)).status, 200, 'the key works before the delete');
  const deleted = await api.del(`/api/client/apps/${second.id}`, token);
  t.equal(deleted.status, 204);
  t.equal(deleted.text, '');
  assertProblem(t, await api.get(`/api/client/apps/${second.id}`, token), 404, 'APP_NOT_FOUND', 'deleted app');
  assertProblem(t, await api.del(`/api/client/apps/${second.id}`, token), 404, 'APP_NOT_FOUND', 'deleted twice');
  await assertRevoked(t, key.body.token, 'deleting an application revokes its keys');
  t.same((await api.get('/api/client/apps', token)).body.applications.map((a: { id: string }) => a.id), [created.body.id]);
});

t.test('API keys: create, list without the token, revoke, rotate (spec §2.3)', async (t) => {
  const token = await account();
  const app = await createApp(token);
  const created = await api.call('POST', `/api/client/apps/${app.id}/keys`, { token });
  t.equal(created.status, 201, 'no body needed');
  t.same(Object.keys(created.body).sort(), ['audience', 'createdAt', 'id', 'keyPrefix', 'keySuffix', 'tier', 'token']);
  t.match(created.body, { id: UUID, token: /^[\w-]+\.[\w-]+\.[\w-]+$/, tier: 'DEMO', createdAt: ISO });
  t.equal(created.body.keyPrefix, created.body.token.slice(0, 8), "keyPrefix is the token's first 8 characters");
  t.equal(created.body.keySuffix, created.body.token.slice(-4), "keySuffix its last 4");
  const detail = (await api.get(`/api/client/apps/${app.id}`, token)).body;
  t.equal(created.body.audience, detail.clusterName, "audience is the cluster's name");
  t.match((await whoami(created.body.token)).body, { appId: app.id, keyId: created.body.id });

  const list = await api.get(`/api/client/apps/${app.id}/keys`, token);
  t.equal(list.status, 200);
  t.same(Object.keys(list.body), ['keys']);
  t.equal(list.body.keys.length, 1);
  t.match(list.body.keys[0], { id: created.body.id, keyPrefix: created.body.keyPrefix, keySuffix: created.body.keySuffix, audience: created.body.audience, tier: 'DEMO', status: 'ACTIVE', createdAt: created.body.createdAt });
  t.notOk(list.text.includes(created.body.token), 'the list never shows the token');
  t.notOk('token' in list.body.keys[0]);

  const rotated = await api.post(`/api/client/apps/${app.id}/keys/${created.body.id}/rotate`, undefined, token);
  t.equal(rotated.status, 201);
  t.same(Object.keys(rotated.body).sort(), ['audience', 'createdAt', 'id', 'keyPrefix', 'keySuffix', 'tier', 'token']);
  t.not(rotated.body.id, created.body.id);
  const suffixes = (await api.get(`/api/client/apps/${app.id}/keys`, token)).body.keys.map((k: { keySuffix: string }) => k.keySuffix);
  t.equal(new Set(suffixes).size, 2, `the two keys are told apart by keySuffix (${suffixes.join(', ')}), where keyPrefix is alike`);
  await assertRevoked(t, created.body.token, 'the rotated key stops at once');
  t.equal((await whoami(rotated.body.token)).status, 200, 'the new key works');
  assertProblem(t, await api.post(`/api/client/apps/${app.id}/keys/${created.body.id}/rotate`, undefined, token), 409, 'KEY_REVOKED', 'a revoked key cannot be rotated');
  const statuses = (await api.get(`/api/client/apps/${app.id}/keys`, token)).body.keys.map((k: { id: string; status: string; revokedAt?: string }) => [k.id, k.status, typeof k.revokedAt]);
  t.same(statuses, [[created.body.id, 'REVOKED', 'string'], [rotated.body.id, 'ACTIVE', 'undefined']]);

  t.equal((await api.del(`/api/client/apps/${app.id}/keys/${rotated.body.id}`, token)).status, 204);
  t.equal((await api.del(`/api/client/apps/${app.id}/keys/${rotated.body.id}`, token)).status, 204, 'revoke is idempotent');
  await assertRevoked(t, rotated.body.token, 'a revoked key stops at once');
  assertProblem(t, await api.del(`/api/client/apps/${app.id}/keys/00000000-0000-4000-8000-000000000000`, token), 404, 'KEY_NOT_FOUND');
  assertProblem(t, await api.post(`/api/client/apps/${app.id}/keys/00000000-0000-4000-8000-000000000000/rotate`, undefined, token), 404, 'KEY_NOT_FOUND');
});

t.test("another account's applications and keys are not found, for every operation", async (t) => {
  const [owner, stranger] = [await account(), await account()];
  const app = await createApp(owner);
  const key = (await api.post(`/api/client/apps/${app.id}/keys`, undefined, owner)).body;
  t.same((await api.get('/api/client/apps', stranger)).body, { applications: [] }, 'the list shows none');
  const base = `/api/client/apps/${app.id}`;
  const attempts: [string, string, unknown][] = [
    ['GET', base, undefined],
    ['PUT', base, { name: 'Taken' }],
    ['DELETE', base, undefined],
    ['POST', `${base}/keys`, undefined],
    ['GET', `${base}/keys`, undefined],
    ['DELETE', `${base}/keys/${key.id}`, undefined],
    ['POST', `${base}/keys/${key.id}/rotate`, undefined],
  ];
  for (const [method, path, body] of attempts) assertProblem(t, await api.call(method, path, { token: stranger, body }), 404, 'APP_NOT_FOUND', `${method} ${path.replace(app.id, ':app')}`);
  // Nothing changed for the owner.
  const detail = (await api.get(base, owner)).body;
  t.equal(detail.name, app.name);
  t.match((await api.get(`${base}/keys`, owner)).body.keys, [{ id: key.id, status: 'ACTIVE' }]);
  t.equal((await whoami(key.token)).status, 200);
});

t.test('limits: the 6th application and the 6th active key are refused; deleting or revoking frees a slot', async (t) => {
  const token = await account();
  const apps = [];
  for (let i = 0; i < 5; i++) apps.push(await createApp(token, `App ${i}`));
  const sixth = await api.post('/api/client/apps', { name: 'App 5' }, token);
  assertProblem(t, sixth, 403, 'APP_LIMIT_REACHED', '6th application');
  t.equal((await api.get('/api/client/apps', token)).body.applications.length, 5, 'nothing was created');
  t.equal((await api.del(`/api/client/apps/${apps[4]!.id}`, token)).status, 204);
  t.equal((await api.post('/api/client/apps', { name: 'App 5' }, token)).status, 201, 'a deleted application frees its slot');

  const app = apps[0]!;
  const keys = [];
  for (let i = 0; i < 5; i++) {
    const res = await api.post(`/api/client/apps/${app.id}/keys`, undefined, token);
    t.equal(res.status, 201, `key ${i + 1}`);
    keys.push(res.body);
  }
  assertProblem(t, await api.post(`/api/client/apps/${app.id}/keys`, undefined, token), 403, 'KEY_LIMIT_REACHED', '6th active key');
  const rotated = await api.post(`/api/client/apps/${app.id}/keys/${keys[0].id}/rotate`, undefined, token);
  t.equal(rotated.status, 201, 'rotating at the limit replaces a key rather than adding one');
  assertProblem(t, await api.post(`/api/client/apps/${app.id}/keys`, undefined, token), 403, 'KEY_LIMIT_REACHED', 'still at the limit after a rotation');
  t.equal((await api.del(`/api/client/apps/${app.id}/keys/${keys[1].id}`, token)).status, 204);
  t.equal((await api.post(`/api/client/apps/${app.id}/keys`, undefined, token)).status, 201, 'revoking a key frees a slot');
  const active = (await api.get(`/api/client/apps/${app.id}/keys`, token)).body.keys.filter((k: { status: string }) => k.status === 'ACTIVE');
  t.equal(active.length, 5);
});

t.test('a suspended application refuses new keys; the operator command suspends and reactivates', async (t) => {
  const token = await account();
  const app = await createApp(token);
  const key = (await api.post(`/api/client/apps/${app.id}/keys`, undefined, token)).body;
  const suspended = await ctl('app', 'suspend', app.id);
  t.match(suspended.stdout, /SUSPENDED/);
  t.equal((await api.get(`/api/client/apps/${app.id}`, token)).body.status, 'SUSPENDED', 'the state shows in the detail form');
  assertProblem(t, await api.post(`/api/client/apps/${app.id}/keys`, undefined, token), 409, 'APP_SUSPENDED', 'create');
  assertProblem(t, await api.post(`/api/client/apps/${app.id}/keys/${key.id}/rotate`, undefined, token), 409, 'APP_SUSPENDED', 'rotate');
  t.equal((await whoami(key.token)).status, 200, 'existing keys keep working');
  t.equal((await api.del(`/api/client/apps/${app.id}/keys/${key.id}`, token)).status, 204, 'a key can still be revoked');
  const shown = JSON.parse((await ctl('app', 'show', app.id)).stdout);
  t.match(shown, { id: app.id, status: 'SUSPENDED' });
  await ctl('app', 'reactivate', app.id);
  t.equal((await api.get(`/api/client/apps/${app.id}`, token)).body.status, 'ACTIVE');
  t.equal((await api.post(`/api/client/apps/${app.id}/keys`, undefined, token)).status, 201, 'keys again after reactivation');
  const missing = await ctl('app', 'show', '00000000-0000-4000-8000-000000000000').catch((e: { code: number; stderr: string }) => e);
  t.match(missing, { code: 1, stderr: /not found/ }, 'an unknown application exits 1');
  const usage = await ctl('app', 'suspend', 'not-a-uuid').catch((e: { code: number; stderr: string }) => e);
  t.match(usage, { code: 2 }, 'a malformed id is a usage error');
});

t.test('bad input on application and key routes: 400 with the problem shape, 413 for oversized bodies', async (t) => {
  const token = await account();
  const app = await createApp(token);
  const json = { 'content-type': 'application/json' };
  assertProblem(t, await api.call('POST', '/api/client/apps', { token, raw: '{"name": ', headers: json }), 400, 'MALFORMED_JSON', 'malformed JSON');
  assertProblem(t, await api.post('/api/client/apps', { name: 5 }, token), 400, 'VALIDATION_FAILED', 'wrong type');
  assertProblem(t, await api.post('/api/client/apps', {}, token), 400, 'VALIDATION_FAILED', 'missing name');
  assertProblem(t, await api.post('/api/client/apps', { name: '' }, token), 400, 'VALIDATION_FAILED', 'empty name');
  assertProblem(t, await api.post('/api/client/apps', { name: 'x'.repeat(65) }, token), 400, 'VALIDATION_FAILED', 'name too long');
  assertProblem(t, await api.post('/api/client/apps', { name: ' padded ' }, token), 400, 'VALIDATION_FAILED', 'surrounding whitespace');
  assertProblem(t, await api.post('/api/client/apps', { name: 'ok', extra: true }, token), 400, 'VALIDATION_FAILED', 'unknown field');
  assertProblem(t, await api.put(`/api/client/apps/${app.id}`, { name: [] }, token), 400, 'VALIDATION_FAILED', 'update with a wrong type');
  assertProblem(t, await api.get('/api/client/apps/not-a-uuid', token), 400, 'VALIDATION_FAILED', 'malformed appId');
  assertProblem(t, await api.del(`/api/client/apps/${app.id}/keys/123`, token), 400, 'VALIDATION_FAILED', 'malformed keyId');
  const big = JSON.stringify({ name: 'x'.repeat(70 * 1024) });
  assertProblem(t, await api.call('POST', '/api/client/apps', { token, raw: big, headers: json }), 413, 'PAYLOAD_TOO_LARGE', 'oversized body');
  const chunked = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < 80; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(1024)));
      controller.close();
    },
  });
  const streamed = await fetch(`${svc.controlUrl}/api/client/apps`, { method: 'POST', headers: { ...json, authorization: `Bearer ${token}` }, body: chunked, duplex: 'half' } as RequestInit);
  t.equal(streamed.status, 413, 'a chunked body is cut off while it streams');
  t.same((await api.get('/api/client/apps', token)).body.applications.map((a: { id: string }) => a.id), [app.id], 'nothing was created by bad input');
});
