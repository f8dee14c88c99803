import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { generateSigningKey } from '../../common/jwt/index.ts';
import { LmdbControlStore } from '../../control/store/index.ts';
import type { Account, ApiKeyRecord, Application, RefreshTokenRecord, SessionFamily } from '../../control/index.ts';
import { controlStoreConformance } from './store-conformance.ts';

const freshDir = () => mkdtemp(join(tmpdir(), 'control-store-'));

controlStoreConformance(t, 'lmdb', async () => {
  const dir = await freshDir();
  const store = LmdbControlStore.open(dir);
  return {
    store,
    cleanup: async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

t.test('lmdb: data survives close and reopen of the same path', async (t) => {
  const dir = await freshDir();
  const open = new Set<LmdbControlStore>();
  t.teardown(async () => {
    for (const store of open) await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  const now = '2030-01-01T00:00:00.000Z';

  const account: Account = {
    id: randomUUID(),
    email: `reopen-${randomUUID()}@example.test`,
    companyName: 'Acme',
    role: 'CLIENT',
    passwordHash: 'aGFzaA==',
    passwordSalt: 'c2FsdA==',
    createdAt: now,
    updatedAt: now,
  };
  const family: SessionFamily = { id: randomUUID(), accountId: account.id, createdAt: now, expiresAt: '2030-02-01T00:00:00.000Z' };
  const first: RefreshTokenRecord = { hash: 'a'.repeat(64), familyId: family.id, accountId: account.id, expiresAt: family.expiresAt };
  const signingKey = generateSigningKey(new Date(now));

  const writer = LmdbControlStore.open(dir);
  open.add(writer);
  t.equal(await writer.accounts.create(account), 'created');
  await writer.sessions.createFamily(family, first);
  const cluster = await writer.clusters.upsert('demo', 'http://node.example:8081', now);
  const app: Application = {
    id: randomUUID(),
    clientId: account.id,
    name: 'App',
    status: 'ACTIVE',
    type: 'DEMO',
    tier: 'DEMO',
    clusterId: cluster.id,
    createdAt: now,
    updatedAt: now,
  };
  t.equal(await writer.applications.create(app, 5), 'created');
  const key: ApiKeyRecord = { id: randomUUID(), appId: app.id, tokenHash: 'b'.repeat(64), keyPrefix: 'abcd1234', audience: 'demo', tier: 'DEMO', createdAt: now };
  const revokedKey: ApiKeyRecord = { ...key, id: randomUUID(), tokenHash: 'c'.repeat(64) };
  t.equal(await writer.keys.create(key, 5), 'created');
  t.equal(await writer.keys.create(revokedKey, 5), 'created');
  t.equal(await writer.keys.revoke(app.id, revokedKey.id, now), 'revoked');
  t.same(await writer.signingKeys.ensure(signingKey), signingKey);
  await writer.close();
  open.delete(writer);

  const reader = LmdbControlStore.open(dir);
  open.add(reader);
  t.same(await reader.accounts.get(account.id), account);
  t.same(await reader.accounts.getByEmail(account.email), account);
  t.equal(await reader.accounts.create({ ...account, id: randomUUID() }), 'exists', 'e-mail uniqueness survives');
  t.same(await reader.sessions.getFamily(family.id), family);
  t.same(await reader.sessions.findToken(first.hash), first);
  t.same(await reader.clusters.get(cluster.id), cluster);
  t.equal((await reader.clusters.upsert('demo', 'http://moved.example:8081', now)).id, cluster.id, 'the cluster id survives');
  t.same(await reader.applications.get(account.id, app.id), app);
  t.same(await reader.applications.getById(app.id), app);
  t.same(await reader.applications.list(account.id), [app]);
  t.same(await reader.keys.get(app.id, key.id), key);
  t.equal(await reader.keys.isActive(app.id, key.id), true);
  t.equal(await reader.keys.isActive(app.id, revokedKey.id), false, 'revocation survives');
  t.same(await reader.signingKeys.list(), [signingKey]);
  t.same(await reader.signingKeys.ensure(generateSigningKey()), signingKey, 'the stored signing key is kept');
});
