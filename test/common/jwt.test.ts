import t, { type Test } from 'tap';
import { ApiError } from '../../common/errors/index.ts';
import { bearerToken, generateSigningKey, TokenIssuer, TokenVerifier, type TokenClaims, type VerifierOptions } from '../../common/jwt/index.ts';

const ISSUER = 'https://control.example.test';
const key = generateSigningKey();
const issuer = new TokenIssuer(key, ISSUER);
const accessOptions: VerifierOptions = { kind: 'access', audience: 'control', issuer: ISSUER, requireExpiry: true };
const verifier = (options: Partial<VerifierOptions> = {}, keys = [key]) => new TokenVerifier({ ...accessOptions, ...options }, keys);
const access = (overrides: Partial<Parameters<TokenIssuer['issue']>[0]> = {}) =>
  issuer.issue({ kind: 'access', subject: 'account-1', audience: 'control', expiresInSeconds: 900, ...overrides });

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const parts = (token: string): [string, string, string] => {
  const [h = '', p = '', s = ''] = token.split('.');
  return [h, p, s];
};

function expectError(t: Test, result: TokenClaims | ApiError, code: 'TOKEN_INVALID' | 'TOKEN_EXPIRED', what: string): void {
  t.ok(result instanceof ApiError, `${what}: rejected`);
  if (result instanceof ApiError) {
    t.equal(result.code, code, `${what}: ${code}`);
    t.equal(result.status, 401, `${what}: 401`);
  }
}

t.test('an issued token verifies and carries its claims', async (t) => {
  const before = Math.floor(Date.now() / 1000);
  const token = access({ jwtId: 'jti-1', claims: { appId: 'app-9' } });
  t.equal(TokenVerifier.kidOf(token), key.kid, 'the header names the key');
  const header = JSON.parse(Buffer.from(parts(token)[0], 'base64url').toString()) as Record<string, unknown>;
  t.equal(header.alg, 'EdDSA');
  const claims = verifier().verify(token);
  t.notOk(claims instanceof ApiError, 'verifies');
  if (claims instanceof ApiError) return;
  t.match(claims, { kind: 'access', sub: 'account-1', aud: 'control', iss: ISSUER, jti: 'jti-1', appId: 'app-9' });
  t.ok(typeof claims.iat === 'number' && claims.iat >= before, 'iat is now');
  t.equal(claims.exp, (claims.iat ?? 0) + 900, 'exp is iat + lifetime');
});

t.test('extra claims cannot override the reserved ones', async (t) => {
  const token = access({ claims: { kind: 'api_key', sub: 'someone-else', iss: 'evil' } });
  const claims = verifier().verify(token);
  t.notOk(claims instanceof ApiError);
  t.match(claims, { kind: 'access', sub: 'account-1', iss: ISSUER });
});

t.test('a token of another kind is TOKEN_INVALID', async (t) => {
  const apiKey = issuer.issue({ kind: 'api_key', subject: 'app-1', audience: 'control' });
  expectError(t, verifier({ requireExpiry: false }).verify(apiKey), 'TOKEN_INVALID', 'api_key as access');
  const accessToken = access();
  expectError(t, verifier({ kind: 'api_key', requireExpiry: false }).verify(accessToken), 'TOKEN_INVALID', 'access as api_key');
});

t.test('a wrong audience is TOKEN_INVALID', async (t) => {
  expectError(t, verifier().verify(access({ audience: 'other-cluster' })), 'TOKEN_INVALID', 'wrong audience');
});

t.test('a wrong issuer is TOKEN_INVALID', async (t) => {
  const foreign = new TokenIssuer(key, 'https://evil.example.test').issue({ kind: 'access', subject: 'a', audience: 'control', expiresInSeconds: 60 });
  expectError(t, verifier().verify(foreign), 'TOKEN_INVALID', 'wrong issuer');
});

t.test('an unknown kid is TOKEN_INVALID', async (t) => {
  const other = generateSigningKey();
  const token = new TokenIssuer(other, ISSUER).issue({ kind: 'access', subject: 'a', audience: 'control', expiresInSeconds: 60 });
  expectError(t, verifier().verify(token), 'TOKEN_INVALID', 'unknown kid');
  const both = verifier({}, [key, other]);
  t.notOk(both.verify(token) instanceof ApiError, 'verifies once the key is known');
});

t.test('a key signing under another key’s kid is TOKEN_INVALID', async (t) => {
  const impostor = { ...generateSigningKey(), kid: key.kid };
  const token = new TokenIssuer(impostor, ISSUER).issue({ kind: 'access', subject: 'a', audience: 'control', expiresInSeconds: 60 });
  expectError(t, verifier().verify(token), 'TOKEN_INVALID', 'forged with a known kid');
});

t.test('a tampered token is TOKEN_INVALID', async (t) => {
  const [h, p, s] = parts(access());
  const flipped = s.slice(0, 10) + (s[10] === 'A' ? 'B' : 'A') + s.slice(11);
  expectError(t, verifier().verify(`${h}.${p}.${flipped}`), 'TOKEN_INVALID', 'tampered signature');
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
  const elevated = b64url({ ...payload, sub: 'admin' });
  expectError(t, verifier().verify(`${h}.${elevated}.${s}`), 'TOKEN_INVALID', 'tampered payload');
  expectError(t, verifier().verify(`${h}.${p}.`), 'TOKEN_INVALID', 'signature removed');
});

t.test('alg none is TOKEN_INVALID', async (t) => {
  const [, p] = parts(access());
  const unsigned = `${b64url({ alg: 'none', typ: 'JWT', kid: key.kid })}.${p}.`;
  expectError(t, verifier().verify(unsigned), 'TOKEN_INVALID', 'alg none');
  const hs = `${b64url({ alg: 'HS256', typ: 'JWT', kid: key.kid })}.${p}.${parts(access())[2]}`;
  expectError(t, verifier().verify(hs), 'TOKEN_INVALID', 'alg HS256');
});

t.test('garbage is TOKEN_INVALID', async (t) => {
  for (const token of ['', 'abc', 'a.b.c', '...']) expectError(t, verifier().verify(token), 'TOKEN_INVALID', JSON.stringify(token));
  t.equal(TokenVerifier.kidOf('not a token'), undefined);
});

t.test('an expired token is TOKEN_EXPIRED', async (t) => {
  const expired = access({ expiresInSeconds: -60 });
  expectError(t, verifier().verify(expired), 'TOKEN_EXPIRED', 'expired');
  const lenient = verifier({ ignoreExpiration: true }).verify(expired);
  t.notOk(lenient instanceof ApiError, 'accepted when expiry is ignored');
});

t.test('requireExpiry rejects a token without exp', async (t) => {
  const forever = issuer.issue({ kind: 'access', subject: 'a', audience: 'control' });
  expectError(t, verifier({ requireExpiry: true }).verify(forever), 'TOKEN_INVALID', 'no exp');
  t.notOk(verifier({ requireExpiry: false }).verify(forever) instanceof ApiError, 'accepted where expiry is not required');
});

t.test('addKey, hasKey, keyCount', async (t) => {
  const v = new TokenVerifier(accessOptions);
  t.equal(v.keyCount, 0);
  expectError(t, v.verify(access()), 'TOKEN_INVALID', 'no keys');
  v.addKey(key);
  v.addKey(key);
  t.equal(v.keyCount, 1, 'adding a key twice keeps one');
  t.ok(v.hasKey(key.kid));
  t.notOk(v.hasKey('other'));
  t.notOk(v.verify(access()) instanceof ApiError);
});

t.test('bearerToken parses Authorization headers', async (t) => {
  t.equal(bearerToken('Bearer abc.def.ghi'), 'abc.def.ghi');
  t.equal(bearerToken('bearer abc'), 'abc', 'scheme is case-insensitive');
  t.equal(bearerToken('BEARER   abc  '), 'abc', 'extra spaces');
  t.equal(bearerToken(undefined), undefined);
  t.equal(bearerToken(''), undefined);
  t.equal(bearerToken('Bearer'), undefined, 'no token');
  t.equal(bearerToken('Bearer '), undefined, 'empty token');
  t.equal(bearerToken('Basic dXNlcjpwYXNz'), undefined, 'another scheme');
  t.equal(bearerToken('Bearer a b'), undefined, 'two tokens');
  t.equal(bearerToken('Bearerabc'), undefined, 'no separator');
});

t.test('a token verified once is taken from memory only while it would still verify: its expiry and its key retirement are checked at each use', async (t) => {
  let now = Date.now();
  const v = new TokenVerifier({ ...accessOptions, now: () => now }, [key]);
  const token = access({ expiresInSeconds: 1 });
  const first = v.verify(token);
  t.notOk(first instanceof ApiError, 'verifies');
  t.equal(v.verify(token), first, 'the second time, the same claims');
  const exp = (first as TokenClaims).exp! * 1000;
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp - Date.now()) + 20));
  expectError(t, v.verify(token), 'TOKEN_EXPIRED', 'once its exp has passed');

  const lasting = access();
  t.notOk(v.verify(lasting) instanceof ApiError, 'another token verifies');
  v.addKey({ ...key, retiresAt: new Date(now + 1000).toISOString() });
  t.notOk(v.verify(lasting) instanceof ApiError, 'before its key retires, still');
  now += 1000;
  expectError(t, v.verify(lasting), 'TOKEN_INVALID', 'from its key’s retiresAt on, even though verified before');
});
