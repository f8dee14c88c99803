import t from 'tap';
import { client, newAccount, removeDir, startService } from '../helpers/index.ts';

const svc = await startService({ LOGIN_MAX_PER_ADDRESS: '100000' });
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});
const api = client(svc.controlUrl);
const account = newAccount('fuzz');
const reg = await api.post('/api/auth/register', account);
const token = reg.body.accessToken as string;
const app = (await api.post('/api/client/apps', { name: 'Fuzzed' }, token)).body;
const key = (await api.post(`/api/client/apps/${app.id}/keys`, undefined, token)).body;
const doc = (await api.get('/openapi.json')).body;
const operations: [string, string][] = [];
for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) for (const m of Object.keys(methods)) operations.push([m.toUpperCase(), path]);

t.test("the control service's OpenAPI 3.1 document describes every route it serves", async (t) => {
  t.equal(doc.openapi, '3.1.0');
  const spec = [
    'POST /api/auth/register', 'POST /api/auth/login', 'POST /api/auth/refresh', 'POST /api/auth/logout',
    'POST /api/client/apps', 'GET /api/client/apps', 'GET /api/client/apps/{appId}', 'PUT /api/client/apps/{appId}', 'DELETE /api/client/apps/{appId}',
    'POST /api/client/apps/{appId}/keys', 'GET /api/client/apps/{appId}/keys', 'DELETE /api/client/apps/{appId}/keys/{keyId}',
    'POST /api/client/apps/{appId}/keys/{keyId}/rotate', 'GET /api/client/profile', 'PUT /api/client/profile',
  ];
  const documented = new Set(operations.map(([m, p]) => `${m} ${p}`));
  for (const op of spec) t.ok(documented.has(op), `documents ${op} (spec §4.1)`);
  for (const [method, path] of operations) {
    const url = path.replace('{appId}', app.id).replace('{keyId}', '00000000-0000-4000-8000-000000000000');
    const res = await api.call(method, url, { token, ...(method === 'POST' || method === 'PUT' ? { raw: '{}', headers: { 'content-type': 'application/json' } } : {}) });
    t.not(res.body?.code, 'ROUTE_NOT_FOUND', `${method} ${path} is served`);
    t.not(res.status, 405, `${method} ${path} accepts ${method}`);
    t.ok(res.status < 500, `${method} ${path}: no 5xx (${res.status})`);
  }
  const unknown = await api.get('/api/nothing-here', token);
  t.equal(unknown.status, 404);
  t.equal(unknown.body.code, 'ROUTE_NOT_FOUND');
  const wrongMethod = await api.call('PATCH', '/api/client/profile', { token });
  t.equal(wrongMethod.status, 405);
  t.ok(wrongMethod.headers.get('allow'), '405 names the allowed methods');
});

/** A small seeded generator, so a failing input can be reproduced from the test's output. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

t.test('no input produces a 5xx or a crash; every refusal has the problem shape; the service keeps serving', async (t) => {
  const random = prng(20261122);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const ids = [app.id, key.id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid', '', '%00', '..', 'a'.repeat(300), '😀', "' OR 1=1 --"];
  const bodies: (string | undefined)[] = [
    undefined, '', '{', '[]', 'null', '0', '"x"', '{"name":', '{"name":null}', '{"name":{"$gt":""}}', '{"__proto__":{"admin":true}}',
    '{"constructor":{"prototype":{"x":1}}}', `{"name":"${'x'.repeat(5000)}"}`, '{"email":1e309,"password":[]}', '{"email":"a@b.c","password":"' + '\u0000'.repeat(20) + '"}',
    '[' .repeat(5000) + ']'.repeat(5000), '{"refreshToken":"rt_' + 'A'.repeat(100) + '"}', '\xff\xfe\xfd', '{"companyName":"\ud800","email":"x@y.z","password":"12345678"}',
  ];
  const tokens = [token, undefined, 'garbage', key.token, `${token}x`, 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.', 'Bearer', reg.body.refreshToken];
  const contentTypes = ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', ''];
  let refusals = 0;
  for (let i = 0; i < 400; i++) {
    const [method, template] = pick(operations);
    const path = template.replace('{appId}', encodeURIComponent(pick(ids))).replace('{keyId}', encodeURIComponent(pick(ids)));
    const raw = pick(bodies);
    const auth = pick(tokens);
    const headers: Record<string, string> = {};
    const type = pick(contentTypes);
    if (type) headers['content-type'] = type;
    const verb = pick([method, method, method, 'POST', 'PUT', 'DELETE']);
    // fetch cannot send a body with GET.
    const withBody = raw !== undefined && verb !== 'GET';
    const res = await api.call(verb, path, { token: auth, headers, ...(withBody ? { raw } : {}) });
    const label = `#${i} ${verb} ${path} body=${JSON.stringify(raw)?.slice(0, 60)}`;
    if (res.status >= 500) t.fail(`${label}: ${res.status} ${res.text.slice(0, 200)}`);
    if (res.status >= 400) {
      refusals++;
      if (res.headers.get('content-type')?.split(';')[0] !== 'application/problem+json' || typeof res.body?.code !== 'string') t.fail(`${label}: refusal without the problem shape: ${res.text.slice(0, 200)}`);
    }
  }
  t.ok(refusals > 300, `most random inputs were refused (${refusals} of 400)`);
  t.equal((await api.get('/healthz')).status, 200, 'still healthy');
  // The fuzz may have logged the session out or deleted the application (valid requests among
  // the random ones); the account itself must still work.
  const login = await api.post('/api/auth/login', { email: account.email, password: account.password });
  t.equal(login.status, 200, 'the account still logs in');
  t.equal((await api.get('/api/client/profile', login.body.accessToken)).status, 200, 'and reads its profile');
});
