import t from 'tap';
import { ApiError } from '../../common/errors/index.ts';
import { generateSigningKey, KeyRing, MemorySigningKeys, publicKeyOf, rotatedKeys, TokenIssuer, TokenVerifier, type VerifierOptions } from '../../common/jwt/index.ts';

// Signing-key rotation on an injected clock: which key signs, which verify, when one retires.

const BASE = Date.now();
const at = (seconds: number) => new Date(BASE + seconds * 1000);

/** A store with a first key at 0 s, rotated at 10 s to a key that signs from 30 s; the first retires at 90 s. */
async function rotated() {
  const store = new MemorySigningKeys();
  const first = await store.ensure(generateSigningKey(at(0)));
  const next = generateSigningKey(at(10), at(30));
  await store.rotate(next, at(90).toISOString());
  let now = BASE;
  const ring = new KeyRing(await store.list(), () => now);
  return { store, first, next, ring, setTime: (seconds: number) => (now = at(seconds).getTime()) };
}

t.test('a rotated key verifies at once, signs from its activeFrom, and the old key retires at retiresAt', async (t) => {
  const { first, next, ring, setTime } = await rotated();
  setTime(10);
  t.equal(ring.signing().kid, first.kid, 'before activeFrom the old key still signs');
  t.same(ring.live().map((k) => k.kid), [first.kid, next.kid], 'the new key already verifies');
  setTime(30);
  t.equal(ring.signing().kid, next.kid, 'from activeFrom the new key signs');
  t.same(ring.live().map((k) => k.kid), [next.kid, first.kid], 'the old key still verifies');
  setTime(89.999);
  t.equal(ring.live().length, 2, 'until retiresAt');
  setTime(90);
  t.same(ring.live().map((k) => k.kid), [next.kid], 'from retiresAt the old key is out');
  t.equal(ring.all().length, 2, 'but still listed');
});

t.test('tokens follow the signing key, and a retired key fails only where retirement counts', async (t) => {
  const { first, next, ring, setTime } = await rotated();
  let now = BASE;
  const options: VerifierOptions = { kind: 'access', audience: 'a', issuer: 'i', requireExpiry: true, now: () => now };
  const verifier = new TokenVerifier(options, ring.all().map(publicKeyOf));
  const lenient = new TokenVerifier({ ...options, ignoreRetirement: true }, ring.all().map(publicKeyOf));
  const issuer = new TokenIssuer(() => ring.signing(), 'i');
  const issue = () => issuer.issue({ kind: 'access', subject: 's', audience: 'a', expiresInSeconds: 3600 });

  setTime(0);
  const old = issue();
  t.equal(TokenVerifier.kidOf(old), first.kid, 'signed by the first key');
  setTime(30);
  const fresh = issue();
  t.equal(TokenVerifier.kidOf(fresh), next.kid, 'after activeFrom, signed by the new key');

  now = at(60).getTime();
  t.notOk(verifier.verify(old) instanceof ApiError, 'an old-key token verifies before retirement');
  t.notOk(verifier.verify(fresh) instanceof ApiError, 'a new-key token verifies');
  now = at(90).getTime();
  const refused = verifier.verify(old);
  t.ok(refused instanceof ApiError && refused.code === 'TOKEN_INVALID', 'after retirement it is refused, although verified (and cached) before');
  t.match(refused instanceof ApiError ? refused.detail : '', /retired/);
  t.notOk(verifier.verify(fresh) instanceof ApiError, 'the new key still verifies');
  t.notOk(lenient.verify(old) instanceof ApiError, 'a verifier that ignores retirement still takes it');
});

t.test('a verifier learns a retirement from addKey, and a ring tells its listeners of a reload', async (t) => {
  const store = new MemorySigningKeys();
  const first = await store.ensure(generateSigningKey(at(0)));
  const now = at(100).getTime();
  const ring = new KeyRing(await store.list(), () => now);
  const verifier = new TokenVerifier({ kind: 'user', audience: 'a', issuer: 'i', requireExpiry: true, now: () => now }, ring.all().map(publicKeyOf));
  const token = new TokenIssuer(first, 'i').issue({ kind: 'user', subject: 's', audience: 'a', expiresInSeconds: 3600 });
  ring.onChange((keys) => keys.forEach((k) => verifier.addKey(publicKeyOf(k))));
  t.notOk(verifier.verify(token) instanceof ApiError, 'verifies before the rotation');
  t.notOk(ring.update(await store.list()), 'no change, no news');

  // Rotated by another process (the operator command), retiring the first key at once.
  await store.rotate(generateSigningKey(at(99), at(99)), at(99).toISOString());
  t.ok(ring.update(await store.list()), 'the reload is a change');
  t.not(ring.signing().kid, first.kid, 'the new key signs');
  t.ok(verifier.verify(token) instanceof ApiError, 'the retired key is refused from then on');
  t.notOk(ring.update([]), 'an empty reload (a store answering nothing) keeps the keys');
});

t.test('rotation keeps an earlier retirement and never retires the new key', async (t) => {
  const a = { ...generateSigningKey(at(0)), retiresAt: at(20).toISOString() };
  const b = generateSigningKey(at(10));
  const c = generateSigningKey(at(30), at(40));
  const keys = rotatedKeys([a, b], c, at(100).toISOString());
  t.same(
    keys.map((k) => [k.kid, k.retiresAt]),
    [
      [a.kid, at(20).toISOString()],
      [b.kid, at(100).toISOString()],
      [c.kid, undefined],
    ],
  );
  const store = new MemorySigningKeys();
  await store.ensure(a);
  await t.rejects(store.rotate(a, at(50).toISOString()), { code: 'KEY_ROTATION_CONFLICT' }, 'a kid already stored is refused');
});
