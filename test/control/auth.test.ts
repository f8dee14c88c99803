import t from 'tap';
import { client, newAccount, removeDir, startService, type Running } from '../helpers/index.ts';
import { assertProblem, retryAfterSeconds } from '../helpers/problem.ts';

/** Starts a service that is stopped (and its data removed) when `t` ends. */
async function serviceFor(tap: { teardown(fn: () => unknown): void }, env: Record<string, string> = {}): Promise<Running> {
  const svc = await startService(env);
  tap.teardown(async () => {
    await svc.stop();
    removeDir(svc.dataDir);
  });
  return svc;
}

// The address throttle is raised so the many logins of this file never reach it; it has its own test.
const svc = await serviceFor(t, { LOGIN_MAX_PER_ADDRESS: '10000' });
const api = client(svc.controlUrl);

async function register(account = newAccount()) {
  const res = await api.post('/api/auth/register', account);
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`);
  return { ...account, accessToken: res.body.accessToken as string, refreshToken: res.body.refreshToken as string };
}

async function login(email: string, password: string) {
  const res = await api.post('/api/auth/login', { email, password });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  return { accessToken: res.body.accessToken as string, refreshToken: res.body.refreshToken as string };
}

t.test('register', async (t) => {
  t.test('201 with exactly the session fields; e-mail lower-cased; the token works', async (t) => {
    const account = newAccount('Mixed.Case');
    const res = await api.post('/api/auth/register', { ...account, email: account.email.toUpperCase() });
    t.equal(res.status, 201);
    t.match(res.headers.get('content-type'), /^application\/json/);
    t.same(Object.keys(res.body).sort(), ['accessToken', 'email', 'expiresIn', 'refreshToken', 'role']);
    t.equal(res.body.email, account.email.toLowerCase());
    t.equal(res.body.role, 'CLIENT');
    t.equal(res.body.expiresIn, 900);
    t.match(res.body.accessToken, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'access token is a JWT');
    t.type(res.body.refreshToken, 'string');
    t.ok(res.body.refreshToken.length >= 20, 'refresh token is long');
    t.not(res.body.refreshToken, res.body.accessToken);
    const profile = await api.get('/api/client/profile', res.body.accessToken);
    t.equal(profile.status, 200);
    t.equal(profile.body.email, account.email.toLowerCase());
    t.equal(profile.body.companyName, account.companyName);
  });

  t.test('409 ACCOUNT_EXISTS for an existing e-mail, also differing only by case', async (t) => {
    const account = newAccount();
    await register(account);
    assertProblem(t, await api.post('/api/auth/register', account), 409, 'ACCOUNT_EXISTS', 'same e-mail');
    assertProblem(t, await api.post('/api/auth/register', { ...account, email: account.email.toUpperCase() }), 409, 'ACCOUNT_EXISTS', 'upper-cased e-mail');
    assertProblem(t, await api.post('/api/auth/register', { ...account, companyName: 'Other', password: 'another-password' }), 409, 'ACCOUNT_EXISTS', 'other fields');
    // The first registration is untouched: its password still logs in.
    t.equal((await api.post('/api/auth/login', { email: account.email, password: account.password })).status, 200);
  });

  t.test('400 VALIDATION_FAILED for invalid bodies, and nothing is created', async (t) => {
    const base = newAccount();
    const cases: [string, unknown][] = [
      ['missing companyName', { email: base.email, password: base.password }],
      ['missing email', { companyName: base.companyName, password: base.password }],
      ['missing password', { companyName: base.companyName, email: base.email }],
      ['empty object', {}],
      ['array body', [base]],
      ['string body', 'hello'],
      ['null body', null],
      ['email is a number', { ...base, email: 42 }],
      ['password is a number', { ...base, password: 12345678 }],
      ['companyName is an object', { ...base, companyName: { name: 'x' } }],
      ['companyName is null', { ...base, companyName: null }],
      ['bad e-mail (no @)', { ...base, email: 'not-an-email' }],
      ['bad e-mail (no domain dot)', { ...base, email: 'someone@localhost' }],
      ['bad e-mail (spaces)', { ...base, email: 'some one@example.com' }],
      ['password of 7 characters', { ...base, password: '1234567' }],
      ['empty password', { ...base, password: '' }],
      ['empty companyName', { ...base, companyName: '' }],
      ['whitespace-only companyName', { ...base, companyName: '   ' }],
      ['companyName with leading space', { ...base, companyName: ' Acme' }],
      ['companyName with trailing space', { ...base, companyName: 'Acme ' }],
      ['unknown extra field', { ...base, role: 'ADMIN' }],
    ];
    for (const [label, body] of cases) {
      const res = await api.post('/api/auth/register', body);
      assertProblem(t, res, 400, 'VALIDATION_FAILED', label);
    }
    // None of them registered the account: the valid body still gets 201.
    t.equal((await api.post('/api/auth/register', base)).status, 201, 'valid body after the invalid ones');
  });

  t.test('a password of exactly 8 characters is accepted', async (t) => {
    const res = await api.post('/api/auth/register', { ...newAccount(), password: '12345678' });
    t.equal(res.status, 201);
  });

  t.test('concurrent registrations of one e-mail: exactly one 201, the rest 409', async (t) => {
    const account = newAccount();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api.post('/api/auth/register', { ...account, email: i % 2 ? account.email.toUpperCase() : account.email, companyName: `Racer ${i}` })),
    );
    t.equal(results.filter((r) => r.status === 201).length, 1, 'one created');
    t.equal(results.filter((r) => r.status === 409 && r.body?.code === 'ACCOUNT_EXISTS').length, 7, 'the others 409 ACCOUNT_EXISTS');
    const winner = results.find((r) => r.status === 201);
    const profile = await api.get('/api/client/profile', winner?.body.accessToken);
    t.equal(profile.status, 200);
    t.equal(profile.body.companyName, `Racer ${results.indexOf(winner!)}`, 'the stored account is the winner’s');
  });

  t.test('400 MALFORMED_JSON for broken JSON', async (t) => {
    for (const raw of ['{"companyName": "A", "email": ', '{companyName: "A"}', 'not json at all']) {
      const res = await api.call('POST', '/api/auth/register', { raw, headers: { 'content-type': 'application/json' } });
      assertProblem(t, res, 400, 'MALFORMED_JSON', JSON.stringify(raw));
    }
  });

  t.test('415 UNSUPPORTED_MEDIA_TYPE for a text/plain body', async (t) => {
    const account = newAccount();
    const res = await api.call('POST', '/api/auth/register', { raw: JSON.stringify(account), headers: { 'content-type': 'text/plain' } });
    assertProblem(t, res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const form = await api.call('POST', '/api/auth/register', { raw: 'email=a%40b.c', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assertProblem(t, form, 415, 'UNSUPPORTED_MEDIA_TYPE', 'form body');
    // Not created by the refused request.
    t.equal((await api.post('/api/auth/register', account)).status, 201);
  });

  t.test('content-type application/json with a charset is accepted', async (t) => {
    const res = await api.call('POST', '/api/auth/register', { raw: JSON.stringify(newAccount()), headers: { 'content-type': 'application/json; charset=utf-8' } });
    t.equal(res.status, 201);
  });
});

t.test('login', async (t) => {
  t.test('200 with mfaRequired false, accessToken, email, role, refreshToken', async (t) => {
    const account = await register();
    const res = await api.post('/api/auth/login', { email: account.email, password: account.password });
    t.equal(res.status, 200);
    t.same(Object.keys(res.body).sort(), ['accessToken', 'email', 'mfaRequired', 'refreshToken', 'role']);
    t.equal(res.body.mfaRequired, false);
    t.equal(res.body.email, account.email.toLowerCase());
    t.equal(res.body.role, 'CLIENT');
    t.match(res.body.accessToken, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    t.type(res.body.refreshToken, 'string');
    t.not(res.body.refreshToken, account.refreshToken, 'a login starts a new session with its own refresh token');
    t.equal((await api.get('/api/client/profile', res.body.accessToken)).status, 200);
  });

  t.test('the e-mail is matched case-insensitively', async (t) => {
    const account = await register();
    const res = await api.post('/api/auth/login', { email: account.email.toUpperCase(), password: account.password });
    t.equal(res.status, 200);
    t.equal(res.body.email, account.email.toLowerCase());
  });

  t.test('401 INVALID_CREDENTIALS for a wrong password and for an unknown e-mail', async (t) => {
    const account = await register();
    assertProblem(t, await api.post('/api/auth/login', { email: account.email, password: 'wrong-password' }), 401, 'INVALID_CREDENTIALS', 'wrong password');
    assertProblem(t, await api.post('/api/auth/login', { email: account.email, password: account.password.toUpperCase() }), 401, 'INVALID_CREDENTIALS', 'password case matters');
    const unknown = await api.post('/api/auth/login', { email: newAccount('nobody').email, password: account.password });
    assertProblem(t, unknown, 401, 'INVALID_CREDENTIALS', 'unknown e-mail');
    t.equal(unknown.body.detail, (await api.post('/api/auth/login', { email: account.email, password: 'wrong-password' })).body.detail, 'unknown e-mail is indistinguishable from a wrong password');
  });

  t.test('400 for invalid login bodies', async (t) => {
    assertProblem(t, await api.post('/api/auth/login', { email: 'a@b.co' }), 400, 'VALIDATION_FAILED', 'missing password');
    assertProblem(t, await api.post('/api/auth/login', { email: 'a@b.co', password: 5 }), 400, 'VALIDATION_FAILED', 'password a number');
    assertProblem(t, await api.post('/api/auth/login', { email: 'a@b.co', password: 'x', extra: true }), 400, 'VALIDATION_FAILED', 'extra field');
    assertProblem(t, await api.post('/api/auth/login'), 400, 'VALIDATION_FAILED', 'no body');
    const broken = await api.call('POST', '/api/auth/login', { raw: '{"email":', headers: { 'content-type': 'application/json' } });
    assertProblem(t, broken, 400, 'MALFORMED_JSON');
  });
});

t.test('login throttling per account (LOGIN_MAX_FAILURES=3)', async (t) => {
  const throttled = await serviceFor(t, { LOGIN_MAX_FAILURES: '3', LOGIN_MAX_PER_ADDRESS: '10000' });
  const tapi = client(throttled.controlUrl);
  const victim = newAccount('victim');
  const bystander = newAccount('bystander');
  t.equal((await tapi.post('/api/auth/register', victim)).status, 201);
  t.equal((await tapi.post('/api/auth/register', bystander)).status, 201);

  for (let i = 1; i <= 3; i++) {
    assertProblem(t, await tapi.post('/api/auth/login', { email: victim.email, password: `wrong-${i}-password` }), 401, 'INVALID_CREDENTIALS', `failure ${i}`);
  }
  const blocked = await tapi.post('/api/auth/login', { email: victim.email, password: victim.password });
  assertProblem(t, blocked, 429, 'RATE_LIMITED', '4th attempt with the right password');
  const retry = retryAfterSeconds(blocked);
  t.ok(Number.isInteger(retry) && retry >= 1, `Retry-After is an integer ≥ 1 (got ${blocked.headers.get('retry-after')})`);
  t.ok(retry <= 900, 'Retry-After is within the window');
  const upper = await tapi.post('/api/auth/login', { email: victim.email.toUpperCase(), password: victim.password });
  assertProblem(t, upper, 429, 'RATE_LIMITED', 'the same account with an upper-cased e-mail');

  const other = await tapi.post('/api/auth/login', { email: bystander.email, password: bystander.password });
  t.equal(other.status, 200, 'a different account is unaffected');

  // Failures on an unknown e-mail are throttled the same way (no account enumeration by timing of 429).
  const ghost = newAccount('ghost').email;
  for (let i = 1; i <= 3; i++) t.equal((await tapi.post('/api/auth/login', { email: ghost, password: 'whatever-pass' })).status, 401);
  assertProblem(t, await tapi.post('/api/auth/login', { email: ghost, password: 'whatever-pass' }), 429, 'RATE_LIMITED', 'unknown e-mail');
});

t.test('concurrent failed logins cannot exceed LOGIN_MAX_FAILURES=3', async (t) => {
  const throttled = await serviceFor(t, { LOGIN_MAX_FAILURES: '3', LOGIN_MAX_PER_ADDRESS: '10000' });
  const tapi = client(throttled.controlUrl);
  const account = newAccount();
  t.equal((await tapi.post('/api/auth/register', account)).status, 201);
  const guesses = await Promise.all(Array.from({ length: 10 }, (_, i) => tapi.post('/api/auth/login', { email: account.email, password: `guess-${i}-password` })));
  const statuses = guesses.map((r) => r.status).sort();
  t.same(statuses, [401, 401, 401, 429, 429, 429, 429, 429, 429, 429], 'only 3 guesses are checked');
  assertProblem(t, await tapi.post('/api/auth/login', { email: account.email, password: account.password }), 429, 'RATE_LIMITED', 'right password afterwards');
});

t.test('a successful login resets the failure count (LOGIN_MAX_FAILURES=3)', async (t) => {
  const throttled = await serviceFor(t, { LOGIN_MAX_FAILURES: '3', LOGIN_MAX_PER_ADDRESS: '10000' });
  const tapi = client(throttled.controlUrl);
  const account = newAccount();
  t.equal((await tapi.post('/api/auth/register', account)).status, 201);
  for (let i = 0; i < 2; i++) t.equal((await tapi.post('/api/auth/login', { email: account.email, password: 'wrong-password' })).status, 401);
  t.equal((await tapi.post('/api/auth/login', { email: account.email, password: account.password })).status, 200);
  for (let i = 0; i < 2; i++) t.equal((await tapi.post('/api/auth/login', { email: account.email, password: 'wrong-password' })).status, 401);
  t.equal((await tapi.post('/api/auth/login', { email: account.email, password: account.password })).status, 200, 'two failures after a success do not block');
});

t.test('throttling per address (LOGIN_MAX_PER_ADDRESS)', async (t) => {
  t.test('the N+1th login from one address gets 429', async (t) => {
    const n = 4;
    const limited = await serviceFor(t, { LOGIN_MAX_PER_ADDRESS: String(n) });
    const lapi = client(limited.controlUrl);
    const account = newAccount();
    t.equal((await lapi.post('/api/auth/register', account)).status, 201, 'attempt 1 (register)');
    for (let i = 2; i <= n; i++) {
      t.equal((await lapi.post('/api/auth/login', { email: account.email, password: account.password })).status, 200, `attempt ${i} (login)`);
    }
    const res = await lapi.post('/api/auth/login', { email: account.email, password: account.password });
    assertProblem(t, res, 429, 'RATE_LIMITED', `attempt ${n + 1} (login)`);
    const retry = retryAfterSeconds(res);
    t.ok(Number.isInteger(retry) && retry >= 1, `Retry-After is an integer ≥ 1 (got ${res.headers.get('retry-after')})`);
    assertProblem(t, await lapi.post('/api/auth/register', newAccount()), 429, 'RATE_LIMITED', 'register after the limit');
  });

  t.test('the N+1th register from one address gets 429', async (t) => {
    const n = 3;
    const limited = await serviceFor(t, { LOGIN_MAX_PER_ADDRESS: String(n) });
    const lapi = client(limited.controlUrl);
    for (let i = 1; i <= n; i++) t.equal((await lapi.post('/api/auth/register', newAccount())).status, 201, `register ${i}`);
    const account = newAccount();
    const res = await lapi.post('/api/auth/register', account);
    assertProblem(t, res, 429, 'RATE_LIMITED', `register ${n + 1}`);
    t.ok(retryAfterSeconds(res) >= 1, 'Retry-After ≥ 1');
    assertProblem(t, await lapi.post('/api/auth/login', { email: account.email, password: account.password }), 429, 'RATE_LIMITED', 'login after the limit');
  });

  t.test('routes other than register and login are not throttled by it', async (t) => {
    const limited = await serviceFor(t, { LOGIN_MAX_PER_ADDRESS: '1' });
    const lapi = client(limited.controlUrl);
    const res = await lapi.post('/api/auth/register', newAccount());
    t.equal(res.status, 201);
    for (let i = 0; i < 3; i++) t.equal((await lapi.get('/api/client/profile', res.body.accessToken)).status, 200, `profile ${i + 1}`);
    t.equal((await lapi.post('/api/auth/login', { email: 'x@example.com', password: 'whatever' })).status, 429);
  });
});

t.test('logout', async (t) => {
  t.test('204; the session ends; another session of the account keeps working', async (t) => {
    const account = await register();
    const other = await login(account.email, account.password);
    const res = await api.post('/api/auth/logout', undefined, account.accessToken);
    t.equal(res.status, 204);
    t.equal(res.text, '', 'no body');
    assertProblem(t, await api.get('/api/client/profile', account.accessToken), 401, 'TOKEN_INVALID', 'access token after logout');
    const refresh = await api.call('POST', '/api/auth/refresh', { token: account.accessToken, body: { refreshToken: account.refreshToken } });
    t.equal(refresh.status, 401, 'refresh of the ended session');
    t.ok(['TOKEN_INVALID', 'REFRESH_TOKEN_INVALID'].includes(refresh.body?.code), `refresh code (${refresh.body?.code})`);
    // The other session is untouched: both its access token and its refresh token still work.
    t.equal((await api.get('/api/client/profile', other.accessToken)).status, 200, 'other session access token');
    const otherRefresh = await api.call('POST', '/api/auth/refresh', { token: other.accessToken, body: { refreshToken: other.refreshToken } });
    t.equal(otherRefresh.status, 200, 'other session refresh');
    assertProblem(t, await api.post('/api/auth/logout', undefined, account.accessToken), 401, 'TOKEN_INVALID', 'second logout with the ended token');
  });

  t.test('with a refreshToken of another session of the same account, that session ends too', async (t) => {
    const account = await register();
    const second = await login(account.email, account.password);
    const third = await login(account.email, account.password);
    t.equal((await api.post('/api/auth/logout', { refreshToken: second.refreshToken }, account.accessToken)).status, 204);
    t.equal((await api.get('/api/client/profile', account.accessToken)).status, 401, 'own session ended');
    t.equal((await api.get('/api/client/profile', second.accessToken)).status, 401, 'named session ended');
    t.equal((await api.get('/api/client/profile', third.accessToken)).status, 200, 'third session untouched');
  });

  t.test('a refreshToken of another account does not end that account’s session', async (t) => {
    const mine = await register();
    const theirs = await register();
    t.equal((await api.post('/api/auth/logout', { refreshToken: theirs.refreshToken }, mine.accessToken)).status, 204);
    t.equal((await api.get('/api/client/profile', theirs.accessToken)).status, 200);
  });

  t.test('401 without a token; 400 for an invalid body', async (t) => {
    assertProblem(t, await api.post('/api/auth/logout'), 401, 'AUTH_REQUIRED');
    const account = await register();
    assertProblem(t, await api.post('/api/auth/logout', { refreshToken: 5 }, account.accessToken), 400, 'VALIDATION_FAILED', 'refreshToken a number');
    assertProblem(t, await api.post('/api/auth/logout', { other: 'x' }, account.accessToken), 400, 'VALIDATION_FAILED', 'unknown field');
    t.equal((await api.get('/api/client/profile', account.accessToken)).status, 200, 'the refused logouts did not end the session');
  });
});

t.test('profile', async (t) => {
  t.test('GET returns exactly id, companyName, email, role, createdAt, updatedAt', async (t) => {
    const account = await register();
    const res = await api.get('/api/client/profile', account.accessToken);
    t.equal(res.status, 200);
    t.same(Object.keys(res.body).sort(), ['companyName', 'createdAt', 'email', 'id', 'role', 'updatedAt']);
    t.match(res.body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    t.equal(res.body.companyName, account.companyName);
    t.equal(res.body.email, account.email);
    t.equal(res.body.role, 'CLIENT');
    t.ok(!Number.isNaN(Date.parse(res.body.createdAt)), 'createdAt is a timestamp');
    t.ok(!Number.isNaN(Date.parse(res.body.updatedAt)), 'updatedAt is a timestamp');
    assertProblem(t, await api.get('/api/client/profile'), 401, 'AUTH_REQUIRED', 'no token');
  });

  t.test('PUT companyName → 200 and GET shows it', async (t) => {
    const account = await register();
    const before = (await api.get('/api/client/profile', account.accessToken)).body;
    const res = await api.put('/api/client/profile', { companyName: 'Renamed Inc' }, account.accessToken);
    t.equal(res.status, 200);
    t.equal(res.body.companyName, 'Renamed Inc');
    t.equal(res.body.id, before.id);
    t.equal(res.body.email, before.email);
    t.equal(res.body.createdAt, before.createdAt);
    t.ok(Date.parse(res.body.updatedAt) >= Date.parse(before.updatedAt), 'updatedAt does not go back');
    const after = await api.get('/api/client/profile', account.accessToken);
    t.same(after.body, res.body, 'GET shows the update');
    assertProblem(t, await api.put('/api/client/profile', { companyName: ' padded' }, account.accessToken), 400, 'VALIDATION_FAILED', 'padded companyName');
    assertProblem(t, await api.put('/api/client/profile', { companyName: '' }, account.accessToken), 400, 'VALIDATION_FAILED', 'empty companyName');
  });

  t.test('PUT {} and unknown fields → 400; no token → 401', async (t) => {
    const account = await register();
    assertProblem(t, await api.put('/api/client/profile', {}, account.accessToken), 400, 'VALIDATION_FAILED', '{}');
    assertProblem(t, await api.put('/api/client/profile', { role: 'ADMIN' }, account.accessToken), 400, 'VALIDATION_FAILED', 'role');
    assertProblem(t, await api.put('/api/client/profile', undefined, account.accessToken), 400, 'VALIDATION_FAILED', 'no body');
    assertProblem(t, await api.put('/api/client/profile', { companyName: 'X' }), 401, 'AUTH_REQUIRED', 'no token');
  });

  t.test('e-mail or password change needs the right currentPassword', async (t) => {
    const account = await register();
    const target = newAccount('changed').email;
    assertProblem(t, await api.put('/api/client/profile', { email: target }, account.accessToken), 400, 'VALIDATION_FAILED', 'email without currentPassword');
    assertProblem(t, await api.put('/api/client/profile', { password: 'new-password-123' }, account.accessToken), 400, 'VALIDATION_FAILED', 'password without currentPassword');
    assertProblem(t, await api.put('/api/client/profile', { email: target, currentPassword: 'wrong-password' }, account.accessToken), 401, 'INVALID_CREDENTIALS', 'email, wrong currentPassword');
    assertProblem(t, await api.put('/api/client/profile', { password: 'new-password-123', currentPassword: 'wrong-password' }, account.accessToken), 401, 'INVALID_CREDENTIALS', 'password, wrong currentPassword');
    assertProblem(t, await api.put('/api/client/profile', { email: 'not-an-email', currentPassword: account.password }, account.accessToken), 400, 'VALIDATION_FAILED', 'bad new e-mail');
    assertProblem(t, await api.put('/api/client/profile', { password: 'short', currentPassword: account.password }, account.accessToken), 400, 'VALIDATION_FAILED', 'short new password');
    // Nothing changed; the session survived the refusals.
    const profile = await api.get('/api/client/profile', account.accessToken);
    t.equal(profile.status, 200);
    t.equal(profile.body.email, account.email);
    t.equal((await api.post('/api/auth/login', { email: account.email, password: account.password })).status, 200, 'old password still logs in');
    t.equal((await api.post('/api/auth/login', { email: account.email, password: 'new-password-123' })).status, 401, 'refused new password does not');
  });

  t.test('e-mail change to another account’s e-mail → 409 ACCOUNT_EXISTS', async (t) => {
    const account = await register();
    const other = await register();
    assertProblem(t, await api.put('/api/client/profile', { email: other.email, currentPassword: account.password }, account.accessToken), 409, 'ACCOUNT_EXISTS');
    assertProblem(t, await api.put('/api/client/profile', { email: other.email.toUpperCase(), currentPassword: account.password }, account.accessToken), 409, 'ACCOUNT_EXISTS', 'differing by case');
    t.equal((await api.get('/api/client/profile', account.accessToken)).body.email, account.email, 'own e-mail unchanged');
    t.equal((await api.post('/api/auth/login', { email: other.email, password: other.password })).status, 200, 'other account still logs in');
  });

  t.test('e-mail change: the new e-mail logs in, the old one does not and is free again', async (t) => {
    const account = await register();
    const fresh = newAccount('moved').email;
    const res = await api.put('/api/client/profile', { email: fresh.toUpperCase(), currentPassword: account.password }, account.accessToken);
    t.equal(res.status, 200);
    t.equal(res.body.email, fresh.toLowerCase(), 'stored lower-cased');
    t.equal((await api.post('/api/auth/login', { email: fresh, password: account.password })).status, 200, 'new e-mail logs in');
    assertProblem(t, await api.post('/api/auth/login', { email: account.email, password: account.password }), 401, 'INVALID_CREDENTIALS', 'old e-mail');
    t.equal((await api.post('/api/auth/register', { ...newAccount(), email: account.email })).status, 201, 'old e-mail can be registered again');
    t.equal((await api.get('/api/client/profile', account.accessToken)).status, 200, 'the session keeps working');
  });

  t.test('concurrent updates do not undo each other', async (t) => {
    const account = await register();
    const newPassword = 'concurrent-new-password';
    const [pw, name] = await Promise.all([
      api.put('/api/client/profile', { password: newPassword, currentPassword: account.password }, account.accessToken),
      api.put('/api/client/profile', { companyName: 'Concurrent Name' }, account.accessToken),
    ]);
    t.equal(pw.status, 200);
    t.equal(name.status, 200);
    t.equal((await api.get('/api/client/profile', account.accessToken)).body.companyName, 'Concurrent Name', 'the name change survives the password change');
    t.equal((await api.post('/api/auth/login', { email: account.email, password: newPassword })).status, 200, 'the password change survives the name change');
    t.equal((await api.post('/api/auth/login', { email: account.email, password: account.password })).status, 401, 'the old password is gone');
  });

  t.test('two concurrent password changes with the same currentPassword: only one succeeds', async (t) => {
    const account = await register();
    const [a, b] = await Promise.all([
      api.put('/api/client/profile', { password: 'first-new-password', currentPassword: account.password }, account.accessToken),
      api.put('/api/client/profile', { password: 'second-new-password', currentPassword: account.password }, account.accessToken),
    ]);
    t.same([a.status, b.status].sort(), [200, 401], 'the second is checked against the changed password');
    const winner = a.status === 200 ? 'first-new-password' : 'second-new-password';
    const loser = a.status === 200 ? 'second-new-password' : 'first-new-password';
    t.equal((await api.post('/api/auth/login', { email: account.email, password: winner })).status, 200, 'the accepted password logs in');
    t.equal((await api.post('/api/auth/login', { email: account.email, password: loser })).status, 401, 'the refused one does not');
  });

  t.test('a login with the old password racing a password change keeps no session', async (t) => {
    const account = await register();
    let changed = false;
    const change = api
      .put('/api/client/profile', { password: 'raced-new-password', currentPassword: account.password }, account.accessToken)
      .finally(() => {
        changed = true;
      });
    const granted: string[] = [];
    let attempts = 0;
    const loginUntilChanged = async () => {
      while (!changed) {
        attempts++;
        const res = await api.post('/api/auth/login', { email: account.email, password: account.password });
        if (res.status === 200) granted.push(res.body.accessToken);
        else t.equal(res.status, 401, 'a refused old-password login is 401');
      }
    };
    const [res] = await Promise.all([change, loginUntilChanged(), loginUntilChanged(), loginUntilChanged()]);
    t.equal(res.status, 200, 'password changed');
    t.comment(`${attempts} old-password logins raced the change; ${granted.length} were granted`);
    for (const [i, token] of granted.entries()) {
      assertProblem(t, await api.get('/api/client/profile', token), 401, 'TOKEN_INVALID', `old-password session ${i + 1} of ${granted.length}`);
    }
    t.equal((await api.get('/api/client/profile', account.accessToken)).status, 200, 'the changer’s session stays');
  });

  t.test('password change: old password fails, new works, own session stays, other sessions end', async (t) => {
    const account = await register();
    const other = await login(account.email, account.password);
    const newPassword = 'brand-new-password-42';
    const res = await api.put('/api/client/profile', { password: newPassword, currentPassword: account.password }, account.accessToken);
    t.equal(res.status, 200);
    t.same(Object.keys(res.body).sort(), ['companyName', 'createdAt', 'email', 'id', 'role', 'updatedAt'], 'no password material in the response');
    assertProblem(t, await api.post('/api/auth/login', { email: account.email, password: account.password }), 401, 'INVALID_CREDENTIALS', 'old password');
    t.equal((await api.post('/api/auth/login', { email: account.email, password: newPassword })).status, 200, 'new password logs in');
    t.equal((await api.get('/api/client/profile', account.accessToken)).status, 200, 'the caller’s session keeps working');
    const refreshed = await api.call('POST', '/api/auth/refresh', { token: account.accessToken, body: { refreshToken: account.refreshToken } });
    t.equal(refreshed.status, 200, 'the caller’s session can still refresh');
    assertProblem(t, await api.get('/api/client/profile', other.accessToken), 401, 'TOKEN_INVALID', 'other session access token');
    const otherRefresh = await api.call('POST', '/api/auth/refresh', { token: other.accessToken, body: { refreshToken: other.refreshToken } });
    t.equal(otherRefresh.status, 401, 'other session cannot refresh');
  });
});

t.test('guessing slows down per account and address, with backoff, and never locks the owner out elsewhere', async (t) => {
  const throttled = await serviceFor(t, { LOGIN_MAX_FAILURES: '3', LOGIN_MAX_PER_ADDRESS: '10000', TRUST_PROXY: 'true' });
  const tapi = client(throttled.controlUrl);
  const from = (address: string, body: unknown) => tapi.call('POST', '/api/auth/login', { body, headers: { 'x-forwarded-for': address } });
  const owner = newAccount('owner');
  t.equal((await tapi.post('/api/auth/register', owner)).status, 201);
  const wrong = { email: owner.email, password: 'not-the-password' };
  for (let i = 1; i <= 3; i++) t.equal((await from('203.0.113.7', wrong)).status, 401, `attacker failure ${i}`);
  const first = await from('203.0.113.7', wrong);
  assertProblem(t, first, 429, 'RATE_LIMITED', 'the attacker waits after the third failure');
  t.equal(retryAfterSeconds(first), 1, 'one second at first');
  t.equal((await from('198.51.100.20', { email: owner.email, password: owner.password })).status, 200, 'the owner, from another address, signs in meanwhile');
  await new Promise((resolve) => setTimeout(resolve, 1100));
  t.equal((await from('203.0.113.7', wrong)).status, 401, 'after the wait, one more guess is checked');
  const second = await from('203.0.113.7', wrong);
  assertProblem(t, second, 429, 'RATE_LIMITED', 'and the next waits longer');
  t.equal(retryAfterSeconds(second), 2, 'two seconds: each wait doubles');
});

t.test('currentPassword guesses on profile updates are throttled like logins', async (t) => {
  const throttled = await serviceFor(t, { LOGIN_MAX_FAILURES: '3', LOGIN_MAX_PER_ADDRESS: '10000' });
  const tapi = client(throttled.controlUrl);
  const account = newAccount('profile');
  const token = (await tapi.post('/api/auth/register', account)).body.accessToken as string;
  const change = (currentPassword: string) => tapi.put('/api/client/profile', { password: 'a-brand-new-password', currentPassword }, token);
  for (let i = 1; i <= 3; i++) assertProblem(t, await change(`guess-${i}-password`), 401, 'INVALID_CREDENTIALS', `guess ${i}`);
  const limited = await change(account.password);
  assertProblem(t, limited, 429, 'RATE_LIMITED', 'the fourth, even right, waits');
  t.ok(retryAfterSeconds(limited) >= 1, 'with Retry-After');
});

t.test('behind a trusted proxy, the client cannot pick its own address (the leftmost X-Forwarded-For is its claim)', async (t) => {
  const proxied = await serviceFor(t, { TRUST_PROXY: 'true', LOGIN_MAX_PER_ADDRESS: '2' });
  const papi = client(proxied.controlUrl);
  const account = newAccount('proxied');
  // The proxy appends the address it saw (198.51.100.9); whatever the client wrote before it is a claim.
  const login = (claimed: string) => papi.call('POST', '/api/auth/login', { body: { email: account.email, password: 'wrong-password' }, headers: { 'x-forwarded-for': `${claimed}, 198.51.100.9` } });
  const statuses = [];
  for (const claimed of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) statuses.push((await login(claimed)).status);
  t.same(statuses, [401, 401, 429], 'a new claimed address each time does not reset the per-address budget');
  const other = await papi.call('POST', '/api/auth/login', { body: { email: account.email, password: 'wrong-password' }, headers: { 'x-forwarded-for': '203.0.113.1, 198.51.100.10' } });
  t.equal(other.status, 401, 'another real client address has its own budget');
});

t.test('TRUSTED_PROXY_HOPS=2: the client is the second address from the right', async (t) => {
  const proxied = await serviceFor(t, { TRUST_PROXY: 'true', TRUSTED_PROXY_HOPS: '2', LOGIN_MAX_PER_ADDRESS: '1' });
  const papi = client(proxied.controlUrl);
  const account = newAccount('hops');
  const login = (xff: string) => papi.call('POST', '/api/auth/login', { body: { email: account.email, password: 'wrong-password' }, headers: { 'x-forwarded-for': xff } });
  t.equal((await login('6.6.6.6, 198.51.100.1, 10.0.0.2')).status, 401);
  t.equal((await login('7.7.7.7, 198.51.100.1, 10.0.0.3')).status, 429, 'same client behind two proxies: its budget is spent');
  t.equal((await login('6.6.6.6, 198.51.100.2, 10.0.0.2')).status, 401, 'another client');
});
