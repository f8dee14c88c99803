import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { TokenVerifier } from '../../common/jwt/index.ts';
import { integration, newAccount, nodeScript, removeDir, startService } from '../helpers/index.ts';
import { assertProblem } from '../helpers/problem.ts';
import { decodeJwt, openServiceSigner } from '../helpers/tokens.ts';

// Signing keys rotated by the operator command while the service runs: the new key signs from
// then on, tokens of the old key keep verifying until its retirement, then are refused. The
// services reload their keys every second here, so a new key signs 2 s after the rotation, and
// the old one retires RETIRE_AFTER seconds after that.

const ROOT = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);
const RETIRE_AFTER = 4;
const env = { SIGNING_KEY_REFRESH_SECONDS: '1', LOGIN_MAX_PER_ADDRESS: '10000' };

const svc = await startService(env);
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});

/** `npm run keys -- …` against the running service's store, with its environment. */
async function keys(...args: string[]): Promise<Record<string, any>> {
  const { stdout } = await run(process.execPath, [...nodeScript('bin/keys.ts'), ...args, '--json'], { cwd: ROOT, env: { ...process.env, ...env, DATA_DIR: svc.dataDir } });
  return JSON.parse(stdout) as Record<string, any>;
}

/** Calls `attempt` every 100 ms until it returns a value, for at most `ms`. */
async function eventually<T>(ms: number, attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const waitUntil = (iso: string) => new Promise((r) => setTimeout(r, Math.max(0, Date.parse(iso) - Date.now() + 100)));
const kid = (token: string) => TokenVerifier.kidOf(token);

t.test('the help text names the commands and what a retired key still does', async (t) => {
  const { stdout } = await run(process.execPath, [...nodeScript('bin/keys.ts'), '--help'], { cwd: ROOT });
  t.match(stdout, /rotate <control\|node>/);
  t.match(stdout, /--retire-after/);
  t.match(stdout, /API keys it signed keep working/);
});

t.test('control: access tokens move to the new key; the old key verifies until it retires; API keys and sessions survive', async (t) => {
  const app = await integration(svc, 'rotate');
  const account = newAccount('rotate');
  const reg = await app.control.post('/api/auth/register', account);
  t.equal(reg.status, 201);
  const oldAccess: string = reg.body.accessToken;
  const refreshToken: string = reg.body.refreshToken;
  const listed = await keys('list');
  t.same(listed.control.map((k: { kid: string; state: string }) => [k.kid, k.state]), [[kid(oldAccess), 'signing']], 'one key, signing');

  const rotated = await keys('rotate', 'control', '--retire-after', String(RETIRE_AFTER));
  t.not(rotated.kid, kid(oldAccess), 'a new kid');
  t.same(rotated.replaced.map((k: { kid: string }) => k.kid), [kid(oldAccess)], 'the old key is replaced');
  const retiresAt: string = rotated.replaced[0].retiresAt;
  t.equal(Date.parse(retiresAt), Date.parse(rotated.activeFrom) + RETIRE_AFTER * 1000, 'it retires --retire-after seconds after the new key activates');
  t.equal((await app.control.get('/api/client/profile', oldAccess)).status, 200, 'right after the rotation the old token verifies');

  // From activeFrom (2 s, once the service has reloaded) new tokens carry the new kid.
  const login = async () => (await app.control.post('/api/auth/login', { email: account.email, password: account.password })).body.accessToken as string;
  const fresh = await eventually(6_000, async () => {
    const token = await login();
    return kid(token) === rotated.kid ? token : undefined;
  });
  t.ok(Date.now() >= Date.parse(rotated.activeFrom), 'not before activeFrom');
  t.equal((await app.control.get('/api/client/profile', fresh)).status, 200, 'a token of the new key verifies');
  t.ok(Date.now() < Date.parse(retiresAt), 'still before the retirement');
  t.equal((await app.control.get('/api/client/profile', oldAccess)).status, 200, 'the old-key token still verifies before the retirement');
  const jwks = await app.control.get('/.well-known/jwks.json');
  t.same(jwks.body.keys.map((k: { kid: string }) => k.kid).sort(), [kid(oldAccess), rotated.kid].sort(), 'both public keys are published');

  await waitUntil(retiresAt);
  const refused = await app.control.get('/api/client/profile', oldAccess);
  assertProblem(t, refused, 401, 'TOKEN_INVALID', 'the old-key token, not yet expired, after the retirement');
  t.match(refused.body.detail, /retired/);
  const signer = await openServiceSigner(svc.dataDir);
  t.teardown(() => signer.close());
  t.equal(signer.kid, kid(oldAccess), 'the test signs with the retired key itself');
  // Of a live session, so only the key's retirement can refuse it.
  const { payload } = decodeJwt(fresh);
  const forged = signer.issue({ kind: 'access', subject: String(payload.sub), audience: 'management', expiresInSeconds: 900, claims: { sid: String(payload.sid) } });
  const forgedRes = await app.control.get('/api/client/profile', forged);
  assertProblem(t, forgedRes, 401, 'TOKEN_INVALID', 'a token of a live session freshly signed with the retired key');
  t.match(forgedRes.body.detail, /retired/);
  t.equal((await app.control.get('/api/client/profile', fresh)).status, 200, 'the new key verifies');

  const refreshed = await app.control.call('POST', '/api/auth/refresh', { token: oldAccess, body: { refreshToken } });
  t.equal(refreshed.status, 200, 'the session whose last access token the retired key signed still refreshes: nobody is logged out');
  t.equal(kid(refreshed.body.accessToken), rotated.kid, 'into a token of the new key');
  t.equal((await app.node.get('/api/server/whoami', app.apiKey)).status, 200, 'an API key signed by the retired key keeps working (API keys never expire)');
  t.equal((await keys('list')).control.find((k: { kid: string }) => k.kid === kid(oldAccess)).state, 'retired', 'listed as retired');
});

t.test('node: user JWTs move to the new key; the old key verifies until it retires; refresh needs no key', async (t) => {
  const app = await integration(svc, 'rotate-node');
  const user = await app.user();
  const oldJwt = user.jwt;
  t.equal((await app.node.get('/api/users/me', oldJwt)).status, 200);

  const rotated = await keys('rotate', 'node', '--retire-after', String(RETIRE_AFTER));
  t.not(rotated.kid, kid(oldJwt), 'a new kid');
  const retiresAt: string = rotated.replaced[0].retiresAt;
  t.equal((await app.node.get('/api/users/me', oldJwt)).status, 200, 'right after the rotation the old JWT verifies');

  const signIn = async () => (await app.node.post('/api/users/signin', { userId: user.userId }, app.apiKey)).body.jwt as string;
  const fresh = await eventually(6_000, async () => {
    const jwt = await signIn();
    return kid(jwt) === rotated.kid ? jwt : undefined;
  });
  t.equal((await app.node.get('/api/users/me', fresh)).status, 200, 'a JWT of the new key verifies');
  t.ok(Date.now() < Date.parse(retiresAt), 'still before the retirement');
  t.equal((await app.node.get('/api/users/me', oldJwt)).status, 200, 'the old JWT still verifies before the retirement');

  await waitUntil(retiresAt);
  const refused = await app.node.get('/api/users/me', oldJwt);
  assertProblem(t, refused, 401, 'TOKEN_INVALID', 'the old JWT, not yet expired, after the retirement');
  t.match(refused.body.detail, /retired/);
  t.equal((await app.node.get('/api/users/me', fresh)).status, 200, 'the new key verifies');
  const refreshed = await app.node.post('/api/users/refresh', { refreshToken: user.refreshToken });
  t.equal(refreshed.status, 200, 'a user refreshes with the refresh token alone');
  t.equal(kid(refreshed.body.jwt), rotated.kid, 'into a JWT of the new key');
});

t.test('rotate refuses bad options and a store without keys', async (t) => {
  const bad = await run(process.execPath, [...nodeScript('bin/keys.ts'), 'rotate', 'control', '--retire-after', 'soon'], { cwd: ROOT, env: { ...process.env, DATA_DIR: svc.dataDir } }).then(
    () => undefined,
    (error: { code: number; stderr: string }) => error,
  );
  t.equal(bad?.code, 2, 'exit code 2');
  t.match(bad?.stderr, /--retire-after takes a whole number of seconds/);
  const none = await run(process.execPath, [...nodeScript('bin/keys.ts'), 'list'], { cwd: ROOT, env: { ...process.env, DATA_DIR: `${svc.dataDir}/nowhere` } }).then(
    () => undefined,
    (error: { code: number; stderr: string }) => error,
  );
  t.equal(none?.code, 2);
  t.match(none?.stderr, /no store at/);
});
