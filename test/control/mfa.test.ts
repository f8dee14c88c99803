import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { codeAt } from '../../control/auth/totp.ts';
import { client, newAccount, removeDir, startService } from '../helpers/index.ts';
import { assertProblem, retryAfterSeconds } from '../helpers/problem.ts';

// Multi-factor sign-in (README, "Multi-factor sign-in"): TOTP enrolment, login challenges, codes
// accepted once, recovery codes used once, throttling, and turning it off again. The challenge
// lives 3 s here so that its expiry can be seen.
const svc = await startService({ LOGIN_MAX_PER_ADDRESS: '10000', MFA_TOKEN_TTL_SECONDS: '3' });
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});
const api = client(svc.controlUrl);
const STEP = 30_000;
/** The code of `secret` `steps` time steps from now (the service accepts -1, 0 and +1). */
const code = (secret: string, steps = 0) => codeAt(secret, Date.now() + steps * STEP);
/** A six-digit code valid for none of the accepted steps. */
const wrongCode = (secret: string) => {
  const valid = new Set([-1, 0, 1].map((s) => code(secret, s)));
  for (let n = 0; ; n++) {
    const c = String(n).padStart(6, '0');
    if (!valid.has(c)) return c;
  }
};

async function register() {
  const account = newAccount('mfa');
  const res = await api.post('/api/auth/register', account);
  if (res.status !== 201) throw new Error(`register: ${res.status} ${res.text}`);
  return { ...account, accessToken: res.body.accessToken as string };
}

/** Registers an account and turns MFA on (confirmed with the previous step's code); returns its secret and recovery codes. */
async function withMfa(t: Test) {
  const account = await register();
  const enrol = await api.post('/api/client/mfa/totp', undefined, account.accessToken);
  t.equal(enrol.status, 201, 'enrolment started');
  const secret = enrol.body.secret as string;
  const confirmed = await api.post('/api/client/mfa/totp/confirm', { code: code(secret, -1) }, account.accessToken);
  t.equal(confirmed.status, 200, 'enrolment confirmed');
  return { ...account, secret, recoveryCodes: confirmed.body.recoveryCodes as string[] };
}

const login = (a: { email: string; password: string }) => api.post('/api/auth/login', { email: a.email, password: a.password });

t.test('enrol: a secret, its otpauth URI and QR code; nothing changes until confirmed; ten recovery codes once', async (t) => {
  const account = await register();
  t.same((await api.get('/api/client/mfa', account.accessToken)).body, { enabled: false, recoveryCodesLeft: 0 });
  const enrol = await api.post('/api/client/mfa/totp', undefined, account.accessToken);
  t.equal(enrol.status, 201);
  t.same(Object.keys(enrol.body).sort(), ['otpauthUri', 'qrSvg', 'secret']);
  t.match(enrol.body.secret, /^[A-Z2-7]{32}$/, '160-bit base32 secret');
  t.match(enrol.body.otpauthUri, new RegExp(`^otpauth://totp/.*${encodeURIComponent(account.email)}\\?.*secret=${enrol.body.secret}`));
  t.match(enrol.body.qrSvg, /^<svg[^>]*>[\s\S]*<\/svg>\s*$/, 'an SVG document');
  const stillPlain = await login(account);
  t.equal(stillPlain.body.mfaRequired, false, 'a pending enrolment has no effect on login');
  t.type(stillPlain.body.accessToken, 'string');

  const secret = enrol.body.secret as string;
  assertProblem(t, await api.post('/api/client/mfa/totp/confirm', { code: wrongCode(secret) }, account.accessToken), 400, 'MFA_CODE_INVALID', 'wrong code');
  assertProblem(t, await api.post('/api/client/mfa/totp/confirm', { code: 'abcdef' }, account.accessToken), 400, 'MFA_CODE_INVALID', 'not digits');
  const confirmed = await api.post('/api/client/mfa/totp/confirm', { code: code(secret) }, account.accessToken);
  t.equal(confirmed.status, 200);
  const codes = confirmed.body.recoveryCodes as string[];
  t.equal(codes.length, 10);
  t.equal(new Set(codes).size, 10, 'all different');
  for (const c of codes) t.match(c, /^[a-z2-7]{5}-[a-z2-7]{5}$/);
  t.match((await api.get('/api/client/mfa', account.accessToken)).body, { enabled: true, enabledAt: String, recoveryCodesLeft: 10 });
  assertProblem(t, await api.post('/api/client/mfa/totp/confirm', { code: code(secret, 1) }, account.accessToken), 409, 'MFA_NOT_PENDING', 'confirm again');
  assertProblem(t, await api.post('/api/client/mfa/totp', undefined, account.accessToken), 409, 'MFA_ALREADY_ENABLED', 'enrol again');
  assertProblem(t, await api.post('/api/client/mfa/totp/confirm', { code: '123456' }), 401, 'AUTH_REQUIRED', 'without a token');

  // Stored hashed: no recovery code (with or without its dash) and no code of the secret appears in the data files.
  const files = readdirSync(svc.dataDir, { recursive: true }).map(String).filter((f) => f.endsWith('.mdb'));
  t.ok(files.length > 0, `data files found (${files.join(', ')})`);
  const data = files.map((f) => readFileSync(join(svc.dataDir, f)).toString('latin1')).join('');
  for (const c of codes) t.notOk(data.includes(c) || data.includes(c.replace('-', '')), `recovery code ${c} is not stored in clear`);
});

t.test('login with MFA on: a challenge, no session, and the challenge is bearer nowhere', async (t) => {
  const account = await withMfa(t);
  const res = await login(account);
  t.equal(res.status, 200);
  t.same(Object.keys(res.body).sort(), ['email', 'mfaRequired', 'mfaToken', 'role']);
  t.equal(res.body.mfaRequired, true);
  t.equal(res.body.email, account.email);
  const mfaToken = res.body.mfaToken as string;
  assertProblem(t, await api.get('/api/client/profile', mfaToken), 401, 'TOKEN_INVALID', 'as a management bearer');
  assertProblem(t, await api.post('/api/auth/refresh', { refreshToken: 'rt_x' }, mfaToken), 401, 'TOKEN_INVALID', 'for a refresh');
  assertProblem(t, await client(svc.nodeUrl).get('/api/chats', mfaToken), 401, 'TOKEN_INVALID', 'as a chat user bearer');

  assertProblem(t, await api.post('/api/auth/mfa/verify', { mfaToken, code: wrongCode(account.secret) }), 400, 'MFA_CODE_INVALID', 'a wrong code');
  // Codes are taken at one instant: a 30 s step boundary passing during the test changes nothing.
  const at = Date.now();
  const ok = await api.post('/api/auth/mfa/verify', { mfaToken, code: codeAt(account.secret, at) });
  t.equal(ok.status, 200, 'a right code after a wrong one');
  t.same(Object.keys(ok.body).sort(), ['accessToken', 'email', 'expiresIn', 'mfaRequired', 'refreshToken', 'role']);
  t.equal(ok.body.mfaRequired, false);
  t.equal(ok.body.expiresIn, 900);
  t.equal((await api.get('/api/client/profile', ok.body.accessToken)).status, 200, 'the session works');
  t.equal((await api.post('/api/auth/refresh', { refreshToken: ok.body.refreshToken }, ok.body.accessToken)).status, 200, 'and refreshes');

  const reused = await api.post('/api/auth/mfa/verify', { mfaToken, code: codeAt(account.secret, at + STEP) });
  assertProblem(t, reused, 401, 'TOKEN_INVALID', 'the challenge is single use');
  const again = await login(account);
  const replay = await api.post('/api/auth/mfa/verify', { mfaToken: again.body.mfaToken, code: codeAt(account.secret, at) });
  assertProblem(t, replay, 400, 'MFA_CODE_INVALID', 'a code is accepted once');
  t.match(replay.body.detail, /used already/);
  t.equal((await api.post('/api/auth/mfa/verify', { mfaToken: again.body.mfaToken, code: codeAt(account.secret, at + STEP) })).status, 200, "the next step's code is");
  t.equal((await api.post('/api/auth/mfa/verify', { mfaToken: 'not.a.token', code: '123456' })).status, 401, 'a forged challenge');
});

t.test('a challenge expires', async (t) => {
  const account = await withMfa(t);
  const { mfaToken } = (await login(account)).body;
  await new Promise((resolve) => setTimeout(resolve, 4000));
  assertProblem(t, await api.post('/api/auth/mfa/verify', { mfaToken, code: code(account.secret) }), 401, 'TOKEN_EXPIRED');
});

t.test('recovery codes: each signs in once, in any case and with or without its dash', async (t) => {
  const account = await withMfa(t);
  const [first, second] = account.recoveryCodes;
  const one = await api.post('/api/auth/mfa/verify', { mfaToken: (await login(account)).body.mfaToken, code: first });
  t.equal(one.status, 200, 'a recovery code signs in');
  const twice = await api.post('/api/auth/mfa/verify', { mfaToken: (await login(account)).body.mfaToken, code: first });
  assertProblem(t, twice, 400, 'MFA_CODE_INVALID', 'not twice');
  const typed = second!.toUpperCase().replace('-', ' ');
  t.equal((await api.post('/api/auth/mfa/verify', { mfaToken: (await login(account)).body.mfaToken, code: typed })).status, 200, `typed as "${typed}"`);
  t.equal((await api.get('/api/client/mfa', one.body.accessToken)).body.recoveryCodesLeft, 8);
});

t.test('code guesses: a challenge takes five wrong codes, then the account and address wait, doubling', async (t) => {
  const account = await withMfa(t);
  const { mfaToken } = (await login(account)).body;
  const bad = wrongCode(account.secret);
  for (let i = 1; i <= 4; i++) assertProblem(t, await api.post('/api/auth/mfa/verify', { mfaToken, code: bad }), 400, 'MFA_CODE_INVALID', `wrong code ${i}`);
  assertProblem(t, await api.post('/api/auth/mfa/verify', { mfaToken, code: bad }), 401, 'TOKEN_INVALID', 'the fifth uses the challenge up');
  assertProblem(t, await api.post('/api/auth/mfa/verify', { mfaToken, code: code(account.secret) }), 401, 'TOKEN_INVALID', 'even a right code is refused then');
  const next = (await login(account)).body.mfaToken;
  const waited = await api.post('/api/auth/mfa/verify', { mfaToken: next, code: code(account.secret) });
  assertProblem(t, waited, 429, 'RATE_LIMITED', 'after five failures the next attempt waits');
  t.ok(retryAfterSeconds(waited) >= 1, `with Retry-After (${waited.headers.get('retry-after')})`);
  await new Promise((resolve) => setTimeout(resolve, retryAfterSeconds(waited) * 1000 + 100));
  t.equal((await api.post('/api/auth/mfa/verify', { mfaToken: next, code: code(account.secret) })).status, 200, 'then the owner gets in');
});

t.test('turning MFA off needs the password and a code; then login is one step again', async (t) => {
  const account = await withMfa(t);
  const del = (body: unknown) => api.call('DELETE', '/api/client/mfa/totp', { body, token: account.accessToken });
  assertProblem(t, await del({ currentPassword: 'wrong-password-1', code: code(account.secret) }), 401, 'INVALID_CREDENTIALS', 'wrong password');
  assertProblem(t, await del({ currentPassword: account.password, code: wrongCode(account.secret) }), 400, 'MFA_CODE_INVALID', 'wrong code');
  assertProblem(t, await del({ currentPassword: account.password }), 400, 'VALIDATION_FAILED', 'no code');
  const off = await del({ currentPassword: account.password, code: account.recoveryCodes[0] });
  t.equal(off.status, 204, 'a recovery code does');
  t.same((await api.get('/api/client/mfa', account.accessToken)).body, { enabled: false, recoveryCodesLeft: 0 });
  const plain = await login(account);
  t.equal(plain.body.mfaRequired, false);
  t.type(plain.body.accessToken, 'string');
  assertProblem(t, await del({ currentPassword: account.password, code: '123456' }), 409, 'MFA_NOT_ENABLED', 'off already');
  // And on again with a new secret: the old one and its recovery codes are gone.
  const enrol = await api.post('/api/client/mfa/totp', undefined, account.accessToken);
  t.not(enrol.body.secret, account.secret, 'a new secret');
  t.equal((await api.post('/api/client/mfa/totp/confirm', { code: code(account.secret) }, account.accessToken)).status, 400, "the old secret's code does not confirm it");
  t.equal((await api.post('/api/client/mfa/totp/confirm', { code: code(enrol.body.secret) }, account.accessToken)).status, 200);
  const challenge = (await login(account)).body.mfaToken;
  assertProblem(t, await api.post('/api/auth/mfa/verify', { mfaToken: challenge, code: account.recoveryCodes[1] }), 400, 'MFA_CODE_INVALID', 'old recovery codes are gone');
});
