import t from 'tap';
import { generateSigningKey, TokenIssuer } from '../../common/jwt/index.ts';
import { client, newAccount, removeDir, startService } from '../helpers/index.ts';
import { assertProblem } from '../helpers/problem.ts';
import { base64urlJson, decodeJwt, openServiceSigner } from '../helpers/tokens.ts';

const svc = await startService({ LOGIN_MAX_PER_ADDRESS: '10000' });
const signer = await openServiceSigner(svc.dataDir).catch(async (error: unknown) => {
  await svc.stop();
  throw error;
});
t.teardown(async () => {
  await signer.close();
  await svc.stop();
  removeDir(svc.dataDir);
});
const api = client(svc.controlUrl);

const PROFILE = '/api/client/profile';

interface Session {
  accountId: string;
  sid: string;
  accessToken: string;
  refreshToken: string;
  email: string;
  password: string;
}

async function register(): Promise<Session> {
  const account = newAccount();
  const res = await api.post('/api/auth/register', account);
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`);
  const profile = await api.get(PROFILE, res.body.accessToken);
  const sid = decodeJwt(res.body.accessToken).payload.sid;
  if (typeof sid !== 'string') throw new Error('access token has no sid claim');
  return { accountId: profile.body.id, sid, accessToken: res.body.accessToken, refreshToken: res.body.refreshToken, email: account.email, password: account.password };
}

async function login(of: Session): Promise<Session> {
  const res = await api.post('/api/auth/login', { email: of.email, password: of.password });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  const sid = decodeJwt(res.body.accessToken).payload.sid;
  if (typeof sid !== 'string') throw new Error('access token has no sid claim');
  return { ...of, sid, accessToken: res.body.accessToken, refreshToken: res.body.refreshToken };
}

const refresh = (accessToken: string | undefined, body: unknown) => api.call('POST', '/api/auth/refresh', { token: accessToken, body });

/** Replaces the character at `index` with a different base64url character. */
function changeChar(s: string, index: number): string {
  const c = s[index];
  return s.slice(0, index) + (c === 'A' ? 'B' : 'A') + s.slice(index + 1);
}

t.test('access tokens on a protected route', async (t) => {
  const me = await register();
  const [header, payload, signature] = me.accessToken.split('.') as [string, string, string];

  t.test('the genuine token works and carries the expected claims', async (t) => {
    t.equal((await api.get(PROFILE, me.accessToken)).status, 200);
    const { header: h, payload: p } = decodeJwt(me.accessToken);
    t.equal(h.alg, 'EdDSA');
    t.equal(h.kid, signer.kid, 'signed with the stored key');
    t.equal(p.sub, me.accountId);
    t.equal(p.kind, 'access');
    t.equal(p.aud, 'management');
    t.ok(typeof p.exp === 'number' && typeof p.iat === 'number' && p.exp - p.iat === 900, 'expires 900 s after issue');
    t.equal((await api.call('GET', PROFILE, { headers: { authorization: `bearer ${me.accessToken}` } })).status, 200, 'scheme is case-insensitive');
  });

  t.test('401 AUTH_REQUIRED when missing', async (t) => {
    assertProblem(t, await api.get(PROFILE), 401, 'AUTH_REQUIRED', 'no header');
    assertProblem(t, await api.call('GET', PROFILE, { headers: { authorization: '' } }), 401, 'AUTH_REQUIRED', 'empty header');
    assertProblem(t, await api.call('GET', PROFILE, { headers: { authorization: me.accessToken } }), 401, 'AUTH_REQUIRED', 'no Bearer scheme');
    assertProblem(t, await api.call('GET', PROFILE, { headers: { authorization: `Basic ${me.accessToken}` } }), 401, 'AUTH_REQUIRED', 'Basic scheme');
  });

  t.test('401 TOKEN_INVALID for a tampered payload', async (t) => {
    for (const index of [1, Math.floor(payload.length / 2), payload.length - 2]) {
      const tampered = `${header}.${changeChar(payload, index)}.${signature}`;
      t.not(tampered, me.accessToken);
      assertProblem(t, await api.get(PROFILE, tampered), 401, 'TOKEN_INVALID', `payload char ${index} changed`);
    }
    // A well-formed payload naming another account and session, with the original signature.
    const other = await register();
    const forged = `${header}.${base64urlJson({ ...decodeJwt(me.accessToken).payload, sub: other.accountId, sid: other.sid })}.${signature}`;
    assertProblem(t, await api.get(PROFILE, forged), 401, 'TOKEN_INVALID', 'payload swapped for another account');
    const extended = `${header}.${base64urlJson({ ...decodeJwt(me.accessToken).payload, exp: 9_999_999_999 })}.${signature}`;
    assertProblem(t, await api.get(PROFILE, extended), 401, 'TOKEN_INVALID', 'exp extended');
    assertProblem(t, await api.get(PROFILE, `${header}.${payload}.${changeChar(signature, 5)}`), 401, 'TOKEN_INVALID', 'signature changed');
    assertProblem(t, await api.get(PROFILE, `${header}.${payload}.`), 401, 'TOKEN_INVALID', 'signature removed');
  });

  t.test('401 TOKEN_INVALID for a token with alg "none"', async (t) => {
    const kid = decodeJwt(me.accessToken).header.kid;
    t.equal(kid, signer.kid);
    const none = `${base64urlJson({ alg: 'none', typ: 'JWT', kid })}.${payload}.`;
    assertProblem(t, await api.get(PROFILE, none), 401, 'TOKEN_INVALID', 'alg none, empty signature');
    const noneWithSig = `${base64urlJson({ alg: 'none', typ: 'JWT', kid })}.${payload}.${signature}`;
    assertProblem(t, await api.get(PROFILE, noneWithSig), 401, 'TOKEN_INVALID', 'alg none, original signature');
    const hs = `${base64urlJson({ alg: 'HS256', typ: 'JWT', kid })}.${payload}.${signature}`;
    assertProblem(t, await api.get(PROFILE, hs), 401, 'TOKEN_INVALID', 'alg HS256');
  });

  t.test('401 TOKEN_INVALID for garbage', async (t) => {
    for (const garbage of ['garbage', 'a.b.c', 'x'.repeat(500), `${header}.${payload}`, '...']) {
      assertProblem(t, await api.get(PROFILE, garbage), 401, 'TOKEN_INVALID', JSON.stringify(garbage.slice(0, 30)));
    }
  });

  t.test('401 TOKEN_INVALID for a token signed by another key with the same kid', async (t) => {
    const foreign = { ...generateSigningKey(), kid: signer.kid };
    const token = new TokenIssuer(foreign, 'chat-control').issue({ kind: 'access', subject: me.accountId, audience: 'management', expiresInSeconds: 900, claims: { sid: me.sid } });
    assertProblem(t, await api.get(PROFILE, token), 401, 'TOKEN_INVALID');
  });

  t.test('401 TOKEN_INVALID for an API key used as access token', async (t) => {
    const app = await api.post('/api/client/apps', { name: 'Token test app' }, me.accessToken);
    t.equal(app.status, 201);
    const key = await api.post(`/api/client/apps/${app.body.id}/keys`, undefined, me.accessToken);
    t.equal(key.status, 201);
    t.equal(decodeJwt(key.body.token).header.kid, signer.kid, 'the API key is signed by the same key');
    assertProblem(t, await api.get(PROFILE, key.body.token), 401, 'TOKEN_INVALID', 'GET profile');
    assertProblem(t, await api.get('/api/client/apps', key.body.token), 401, 'TOKEN_INVALID', 'GET apps');
    assertProblem(t, await refresh(key.body.token, { refreshToken: me.refreshToken }), 401, 'TOKEN_INVALID', 'refresh');
  });

  t.test('401 TOKEN_INVALID for a refresh token used as access token', async (t) => {
    assertProblem(t, await api.get(PROFILE, me.refreshToken), 401, 'TOKEN_INVALID');
  });

  t.test('401 TOKEN_EXPIRED for an expired genuine token', async (t) => {
    const expired = signer.expiredAccess(me.accountId, me.sid, 60);
    t.equal(decodeJwt(expired).payload.sid, me.sid);
    assertProblem(t, await api.get(PROFILE, expired), 401, 'TOKEN_EXPIRED');
    // The same minting with a future expiry is accepted, so it is the expiry that is refused.
    const fresh = signer.issue({ kind: 'access', subject: me.accountId, audience: 'management', expiresInSeconds: 600, claims: { sid: me.sid } });
    t.equal((await api.get(PROFILE, fresh)).status, 200, 'same token with future expiry works');
  });

  t.test('validly signed tokens with the wrong kind, audience, issuer or session are refused', async (t) => {
    const base = { subject: me.accountId, expiresInSeconds: 600, claims: { sid: me.sid } };
    const apiKeyKind = signer.issue({ ...base, kind: 'api_key', audience: 'management' });
    assertProblem(t, await api.get(PROFILE, apiKeyKind), 401, 'TOKEN_INVALID', 'kind api_key');
    assertProblem(t, await api.get(PROFILE, signer.issue({ ...base, kind: 'user', audience: 'management' })), 401, 'TOKEN_INVALID', 'kind user');
    assertProblem(t, await api.get(PROFILE, signer.issue({ ...base, kind: 'access', audience: 'demo' })), 401, 'TOKEN_INVALID', 'audience demo');
    const otherIssuer = new TokenIssuer((await signer.store.signingKeys.list())[0]!, 'someone-else');
    assertProblem(t, await api.get(PROFILE, otherIssuer.issue({ ...base, kind: 'access', audience: 'management' })), 401, 'TOKEN_INVALID', 'issuer');
    assertProblem(t, await api.get(PROFILE, signer.issue({ ...base, kind: 'access', audience: 'management', claims: {} })), 401, 'TOKEN_INVALID', 'no sid');
    const other = await register();
    const crossed = signer.issue({ ...base, kind: 'access', audience: 'management', claims: { sid: other.sid } });
    assertProblem(t, await api.get(PROFILE, crossed), 401, 'TOKEN_INVALID', 'sid of another account’s session');
    const noExp = signer.issue({ kind: 'access', subject: me.accountId, audience: 'management', claims: { sid: me.sid } });
    assertProblem(t, await api.get(PROFILE, noExp), 401, 'TOKEN_INVALID', 'no exp');
  });
});

t.test('refresh', async (t) => {
  t.test('200 with a new pair; rotation; reuse revokes the whole session', async (t) => {
    const s = await register();
    const first = await refresh(s.accessToken, { refreshToken: s.refreshToken });
    t.equal(first.status, 200);
    t.same(Object.keys(first.body).sort(), ['accessToken', 'expiresIn', 'refreshToken']);
    t.equal(first.body.expiresIn, 900);
    t.match(first.body.accessToken, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    t.type(first.body.refreshToken, 'string');
    t.not(first.body.refreshToken, s.refreshToken, 'the refresh token rotates');
    t.equal(decodeJwt(first.body.accessToken).payload.sid, s.sid, 'same session');
    t.equal((await api.get(PROFILE, first.body.accessToken)).status, 200, 'the new access token works');

    const second = await refresh(first.body.accessToken, { refreshToken: first.body.refreshToken });
    t.equal(second.status, 200, 'the rotated token refreshes once more');
    t.not(second.body.refreshToken, first.body.refreshToken);

    const reused = await refresh(second.body.accessToken, { refreshToken: s.refreshToken });
    assertProblem(t, reused, 401, 'REFRESH_TOKEN_REUSED', 'the first refresh token again');
    assertProblem(t, await api.get(PROFILE, second.body.accessToken), 401, 'TOKEN_INVALID', 'newest access token after reuse');
    const newest = await refresh(second.body.accessToken, { refreshToken: second.body.refreshToken });
    t.equal(newest.status, 401, 'newest refresh token after reuse');
    t.ok(['TOKEN_INVALID', 'REFRESH_TOKEN_INVALID', 'REFRESH_TOKEN_REUSED'].includes(newest.body?.code), `code ${newest.body?.code}`);
    // Even presented with a live bearer of another session of the account, the newest token is dead.
    const other = await login(s);
    const viaOther = await refresh(other.accessToken, { refreshToken: second.body.refreshToken });
    t.equal(viaOther.status, 401, 'newest refresh token with another session’s bearer');
    t.equal((await api.get(PROFILE, other.accessToken)).status, 200, 'the other session is not affected');
  });

  t.test('reuse with the original access token revokes as well', async (t) => {
    const s = await register();
    const first = await refresh(s.accessToken, { refreshToken: s.refreshToken });
    t.equal(first.status, 200);
    assertProblem(t, await refresh(s.accessToken, { refreshToken: s.refreshToken }), 401, 'REFRESH_TOKEN_REUSED');
    assertProblem(t, await api.get(PROFILE, first.body.accessToken), 401, 'TOKEN_INVALID', 'newest access token');
    const newest = await refresh(first.body.accessToken, { refreshToken: first.body.refreshToken });
    t.equal(newest.status, 401, 'newest refresh token');
  });

  t.test('concurrent refreshes with one refresh token: exactly one succeeds', async (t) => {
    const s = await register();
    const results = await Promise.all(Array.from({ length: 6 }, () => refresh(s.accessToken, { refreshToken: s.refreshToken })));
    t.equal(results.filter((r) => r.status === 200).length, 1, 'one 200');
    t.equal(results.filter((r) => r.status === 401).length, 5, 'the rest 401');
    t.ok(results.some((r) => r.body?.code === 'REFRESH_TOKEN_REUSED'), 'the reuse is detected');
    const winner = results.find((r) => r.status === 200);
    t.equal((await api.get(PROFILE, winner?.body.accessToken)).status, 401, 'the reuse revoked the session, including the winner’s new token');
  });

  t.test('401 REFRESH_TOKEN_INVALID for a refresh token of another session', async (t) => {
    const a = await register();
    const b = await login(a);
    const stranger = await register();
    assertProblem(t, await refresh(a.accessToken, { refreshToken: b.refreshToken }), 401, 'REFRESH_TOKEN_INVALID', 'same account, other session');
    assertProblem(t, await refresh(a.accessToken, { refreshToken: stranger.refreshToken }), 401, 'REFRESH_TOKEN_INVALID', 'other account');
    assertProblem(t, await refresh(a.accessToken, { refreshToken: 'not-a-refresh-token' }), 401, 'REFRESH_TOKEN_INVALID', 'unknown token');
    // The refused attempts consumed nothing: each session still refreshes with its own token.
    t.equal((await refresh(a.accessToken, { refreshToken: a.refreshToken })).status, 200, 'a still refreshes');
    t.equal((await refresh(b.accessToken, { refreshToken: b.refreshToken })).status, 200, 'b still refreshes');
    t.equal((await refresh(stranger.accessToken, { refreshToken: stranger.refreshToken })).status, 200, 'stranger still refreshes');
  });

  t.test('401 without a bearer; 400 without a body', async (t) => {
    const s = await register();
    assertProblem(t, await refresh(undefined, { refreshToken: s.refreshToken }), 401, 'AUTH_REQUIRED', 'no bearer');
    assertProblem(t, await refresh('garbage', { refreshToken: s.refreshToken }), 401, 'TOKEN_INVALID', 'garbage bearer');
    assertProblem(t, await refresh(s.accessToken, undefined), 400, 'VALIDATION_FAILED', 'no body');
    assertProblem(t, await refresh(s.accessToken, {}), 400, 'VALIDATION_FAILED', 'empty object');
    assertProblem(t, await refresh(s.accessToken, { refreshToken: '' }), 400, 'VALIDATION_FAILED', 'empty refreshToken');
    assertProblem(t, await refresh(s.accessToken, { refreshToken: 42 }), 400, 'VALIDATION_FAILED', 'refreshToken a number');
    assertProblem(t, await refresh(s.accessToken, { refreshToken: s.refreshToken, extra: 1 }), 400, 'VALIDATION_FAILED', 'unknown field');
    t.equal((await refresh(s.accessToken, { refreshToken: s.refreshToken })).status, 200, 'the refused attempts consumed nothing');
  });

  t.test('an expired but genuine access token of the same session is accepted', async (t) => {
    const s = await register();
    const expired = signer.expiredAccess(s.accountId, s.sid, 3600);
    assertProblem(t, await api.get(PROFILE, expired), 401, 'TOKEN_EXPIRED', 'expired token on a normal route');
    const res = await refresh(expired, { refreshToken: s.refreshToken });
    t.equal(res.status, 200);
    t.equal(res.body.expiresIn, 900);
    t.not(res.body.refreshToken, s.refreshToken);
    t.equal((await api.get(PROFILE, res.body.accessToken)).status, 200, 'the new access token works');

    const other = await login(s);
    const expiredOther = signer.expiredAccess(other.accountId, other.sid);
    assertProblem(t, await refresh(expiredOther, { refreshToken: res.body.refreshToken }), 401, 'REFRESH_TOKEN_INVALID', 'expired token of another session');
    const forgedExpired = `${expired.split('.')[0]}.${base64urlJson({ ...decodeJwt(expired).payload, sid: other.sid })}.${expired.split('.')[2]}`;
    assertProblem(t, await refresh(forgedExpired, { refreshToken: other.refreshToken }), 401, 'TOKEN_INVALID', 'tampered expired token');
  });

  t.test('an expired access token of an ended session is refused', async (t) => {
    const s = await register();
    t.equal((await api.post('/api/auth/logout', undefined, s.accessToken)).status, 204);
    const expired = signer.expiredAccess(s.accountId, s.sid);
    const res = await refresh(expired, { refreshToken: s.refreshToken });
    assertProblem(t, res, 401, 'TOKEN_INVALID');
  });
});
