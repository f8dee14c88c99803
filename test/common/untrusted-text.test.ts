import t from 'tap';
import { client, integration, startService } from '../helpers/index.ts';
import { assertProblem } from '../helpers/problem.ts';

// Untrusted text meets only linear-time checks, sizes first (README, Validation rules): a huge
// value costs one pass, and names cannot carry control, bidirectional-control or unpaired
// surrogate characters. One embedded service: control and node share a process, so a request
// that stalled one would stall the other.
const svc = await startService({ LOGIN_MAX_PER_ADDRESS: '100000' });
t.teardown(() => svc.stop());
const it = await integration(svc, 'text');

/** Milliseconds a request takes, with its result. */
async function timed<T>(request: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const started = performance.now();
  const result = await request();
  return { ms: performance.now() - started, result };
}

const hostile = `a@${'.'.repeat(60_000)}@`;

t.test('a 60 KB e-mail is refused at once, and the other service keeps answering meanwhile', async (t) => {
  const anonymous = client(svc.controlUrl);
  for (const [label, send] of [
    ['POST /api/auth/register', () => anonymous.post('/api/auth/register', { companyName: 'Acme', email: hostile, password: 'long enough pw' })],
    ['PUT /api/client/profile', () => it.control.put('/api/client/profile', { email: hostile, currentPassword: 'whatever pw' }, it.accessToken)],
  ] as const) {
    const [refused, health] = await Promise.all([timed(send), timed(() => it.node.get('/healthz'))]);
    assertProblem(t, refused.result, 400, 'VALIDATION_FAILED', label);
    t.match(refused.result.body.errors, [{ path: '/body/email', message: /254/ }], `${label}: names the field and its length rule`);
    t.ok(refused.ms < 100, `${label}: answered in ${refused.ms.toFixed(1)} ms (< 100)`);
    t.equal(health.result.status, 200);
    t.ok(health.ms < 100, `${label}: /healthz of the node answered in ${health.ms.toFixed(1)} ms meanwhile (< 100)`);
  }
});

t.test('e-mail addresses: one @, a dotted domain of non-empty labels', async (t) => {
  const anonymous = client(svc.controlUrl);
  let n = 0;
  const register = (email: string) => anonymous.post('/api/auth/register', { companyName: `Acme ${++n}`, email, password: 'long enough pw' });
  for (const email of [`ok-${process.pid}@example.com`, `o.k+tag-${process.pid}@mail.example.co.uk`]) t.equal((await register(email)).status, 201, `${email} is accepted`);
  for (const email of ['a@b', 'a@@b.c', 'a@b@c.d', '@b.c', 'a@.b.c', 'a@b..c', 'a@b.c.', 'a b@c.d', `${'x'.repeat(65)}@b.c`, `a@${'x'.repeat(64)}.c`]) {
    const res = await register(email);
    assertProblem(t, res, 400, 'VALIDATION_FAILED', JSON.stringify(email));
    t.match(res.body.errors, [{ path: '/body/email' }], `${JSON.stringify(email)}: names /body/email`);
  }
});

// NUL, C1 controls, a right-to-left override, an isolate, and an unpaired surrogate (sent as the
// JSON escape \ud800, which parses to a lone UTF-16 unit).
const poisoned = ['Ali\u0000ce', 'Ali\u0085ce', 'Ali\u202Eecila', 'Ali\u2066ce', 'Ali\ud800ce'];

t.test('names refuse control, bidirectional-control and unpaired surrogate characters', async (t) => {
  const anonymous = client(svc.controlUrl);
  const app = it.appId;
  const alice = await it.user('alice');
  const bob = await it.user('bob');
  for (const bad of poisoned) {
    const label = JSON.stringify(bad);
    const checks: [string, Promise<{ status: number; body: any; headers: Headers; text: string }>, string][] = [
      ['companyName', anonymous.post('/api/auth/register', { companyName: bad, email: `c${Date.now()}@example.com`, password: 'long enough pw' }), '/body/companyName'],
      ['email', anonymous.post('/api/auth/register', { companyName: 'Acme', email: `${bad}@example.com`, password: 'long enough pw' }), '/body/email'],
      ['application name', it.control.put(`/api/client/apps/${app}`, { name: bad }, it.accessToken), '/body/name'],
      ['username', it.node.post('/api/users', { username: bad }, it.apiKey), '/body/username'],
      ['displayName', it.node.put(`/api/users/${alice.userId}`, { displayName: bad }, it.apiKey), '/body/displayName'],
      ['group name', it.node.post('/api/chats', { type: 'group', name: bad, memberIds: [bob.userId] }, alice.jwt), '/body/name'],
    ];
    for (const [field, pending, path] of checks) {
      const res = await pending;
      assertProblem(t, res, 400, 'VALIDATION_FAILED', `${field} ${label}`);
      t.match(res.body.errors, [{ path }], `${field} ${label}: names ${path}`);
    }
  }
  // What stays allowed: letters of any script, emoji (a surrogate pair), inner spaces.
  const fine = await it.node.put(`/api/users/${alice.userId}`, { displayName: 'Zoë 李 😀 al-Ḥasan' }, it.apiKey);
  t.equal(fine.status, 200, 'letters of any script and emoji are accepted');
  t.equal(fine.body.displayName, 'Zoë 李 😀 al-Ḥasan');
});
