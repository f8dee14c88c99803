import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { generateSigningKey } from '../../common/jwt/index.ts';
import type { Account, ApiKeyRecord, Application, ControlStore, RefreshTokenRecord, SessionFamily } from '../../control/index.ts';
import { at, NOW, LATER, FAR, PAST } from '../helpers/fixed-clock.ts';
import { mfaStoreConformance } from './store-conformance-mfa.ts';
import { usageStoreConformance } from './store-conformance-usage.ts';
import { webhookStoreConformance } from './store-conformance-webhooks.ts';
import { beforeSendStoreConformance } from './store-conformance-before-send.ts';
import { attachmentSettingsStoreConformance } from './store-conformance-attachment-settings.ts';
import { pushSettingsStoreConformance } from './store-conformance-push-settings.ts';

/**
 * The behaviour every ControlStore implementation must show, written once against the interfaces
 * in control/store/types.ts. Each subtest opens its own store from `open` and cleans it up, so
 * implementations (LMDB, Cassandra) run the same suite unchanged.
 */

export interface OpenedStore {
  store: ControlStore;
  cleanup: () => Promise<void>;
}


const uniqueEmail = () => `user-${randomUUID()}@example.test`;

function account(overrides: Partial<Account> = {}): Account {
  return {
    id: randomUUID(),
    email: uniqueEmail(),
    companyName: 'Acme',
    role: 'CLIENT',
    passwordHash: 'aGFzaA==',
    passwordSalt: 'c2FsdA==',
    createdAt: NOW,
    updatedAt: NOW,
    ...overrides,
  };
}

function family(accountId: string, overrides: Partial<SessionFamily> = {}): SessionFamily {
  return { id: randomUUID(), accountId, createdAt: NOW, expiresAt: FAR, ...overrides };
}

const hash = () => randomUUID().replaceAll('-', '') + randomUUID().replaceAll('-', '');

function token(fam: SessionFamily, overrides: Partial<RefreshTokenRecord> = {}): RefreshTokenRecord {
  return { hash: hash(), familyId: fam.id, accountId: fam.accountId, expiresAt: FAR, ...overrides };
}

const nextToken = (expiresAt = FAR) => ({ hash: hash(), expiresAt });

function application(clientId: string, overrides: Partial<Application> = {}): Application {
  return {
    id: randomUUID(),
    clientId,
    name: 'App',
    status: 'ACTIVE',
    type: 'DEMO',
    tier: 'DEMO',
    clusterId: randomUUID(),
    createdAt: NOW,
    updatedAt: NOW,
    ...overrides,
  };
}

function apiKey(appId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const id = randomUUID();
  return {
    id,
    appId,
    tokenHash: hash(),
    keyPrefix: id.slice(0, 8),
    keySuffix: id.slice(-4),
    audience: 'demo',
    tier: 'DEMO',
    createdAt: NOW,
    ...overrides,
  };
}

const count = <T>(values: readonly T[], value: T) => values.filter((v) => v === value).length;
const byId = <T extends { id: string }>(a: T, b: T) => a.id.localeCompare(b.id);

async function activeKeys(store: ControlStore, appId: string): Promise<number> {
  return (await store.keys.list(appId)).filter((k) => !k.revokedAt).length;
}

export function controlStoreConformance(t: Test, name: string, open: () => Promise<OpenedStore>): void {
  /** Opens a fresh store for one subtest and closes it when the subtest ends. */
  async function fresh(t: Test): Promise<ControlStore> {
    const { store, cleanup } = await open();
    t.teardown(cleanup);
    return store;
  }

  t.test(`${name}: control store conformance`, async (t) => {
    // ---------------------------------------------------------------- accounts
    t.test('accounts: create, get, getByEmail', async (t) => {
      const store = await fresh(t);
      const a = account();
      t.equal(await store.accounts.create(a), 'created');
      t.same(await store.accounts.get(a.id), a);
      t.same(await store.accounts.getByEmail(a.email), a);
      t.equal(await store.accounts.get(randomUUID()), undefined, 'unknown id');
      t.equal(await store.accounts.getByEmail(uniqueEmail()), undefined, 'unknown e-mail');
    });

    t.test('accounts: a second create with the same e-mail is refused and stores nothing', async (t) => {
      const store = await fresh(t);
      const a = account();
      const b = account({ email: a.email, companyName: 'Other' });
      t.equal(await store.accounts.create(a), 'created');
      t.equal(await store.accounts.create(b), 'exists');
      t.equal(await store.accounts.get(b.id), undefined, 'the refused account is not stored');
      t.same(await store.accounts.getByEmail(a.email), a, 'the e-mail still points to the first account');
    });

    t.test('accounts: of 20 concurrent creates with one e-mail exactly one is created', async (t) => {
      const store = await fresh(t);
      const email = uniqueEmail();
      const candidates = Array.from({ length: 20 }, () => account({ email }));
      const results = await Promise.all(candidates.map((a) => store.accounts.create(a)));
      t.equal(count(results, 'created'), 1, 'exactly one created');
      t.equal(count(results, 'exists'), 19, 'all others exist');
      const winner = candidates[results.indexOf('created')];
      t.ok(winner);
      t.same(await store.accounts.getByEmail(email), winner, 'the e-mail maps to the winner');
      const stored = await Promise.all(candidates.map((a) => store.accounts.get(a.id)));
      t.equal(stored.filter((a) => a !== undefined).length, 1, 'only the winner is stored');
    });

    t.test('accounts: update without e-mail change', async (t) => {
      const store = await fresh(t);
      const a = account();
      await store.accounts.create(a);
      const changed = { ...a, companyName: 'Renamed', updatedAt: LATER };
      t.equal(await store.accounts.update(changed), 'updated');
      t.same(await store.accounts.get(a.id), changed);
      t.same(await store.accounts.getByEmail(a.email), changed);
    });

    t.test('accounts: update of an unknown account is not-found and stores nothing', async (t) => {
      const store = await fresh(t);
      const ghost = account();
      t.equal(await store.accounts.update(ghost), 'not-found');
      t.equal(await store.accounts.get(ghost.id), undefined);
      t.equal(await store.accounts.getByEmail(ghost.email), undefined, 'its e-mail is not reserved');
      t.equal(await store.accounts.create(account({ email: ghost.email })), 'created');
    });

    t.test('accounts: an e-mail change releases the old e-mail', async (t) => {
      const store = await fresh(t);
      const a = account();
      await store.accounts.create(a);
      const oldEmail = a.email;
      const moved = { ...a, email: uniqueEmail(), updatedAt: LATER };
      t.equal(await store.accounts.update(moved), 'updated');
      t.same(await store.accounts.get(a.id), moved);
      t.same(await store.accounts.getByEmail(moved.email), moved);
      t.equal(await store.accounts.getByEmail(oldEmail), undefined, 'old e-mail no longer resolves');
      const other = account({ email: oldEmail });
      t.equal(await store.accounts.create(other), 'created', 'old e-mail can be registered again');
      t.same(await store.accounts.getByEmail(oldEmail), other);
    });

    t.test('accounts: changing to an e-mail in use is email-taken and changes nothing', async (t) => {
      const store = await fresh(t);
      const a = account();
      const b = account();
      await store.accounts.create(a);
      await store.accounts.create(b);
      t.equal(await store.accounts.update({ ...a, email: b.email, companyName: 'Thief' }), 'email-taken');
      t.same(await store.accounts.get(a.id), a, 'the account is unchanged');
      t.same(await store.accounts.getByEmail(a.email), a, 'its own e-mail still resolves');
      t.same(await store.accounts.getByEmail(b.email), b, 'the taken e-mail still belongs to its owner');
    });

    t.test('accounts: concurrent changes to one free e-mail: exactly one wins', async (t) => {
      const store = await fresh(t);
      const a = account();
      const b = account();
      await store.accounts.create(a);
      await store.accounts.create(b);
      const target = uniqueEmail();
      const newcomer = account({ email: target });
      const [ra, rb, rc] = await Promise.all([
        store.accounts.update({ ...a, email: target }),
        store.accounts.update({ ...b, email: target }),
        store.accounts.create(newcomer),
      ]);
      const wins = [ra === 'updated', rb === 'updated', rc === 'created'].filter(Boolean).length;
      t.equal(wins, 1, `exactly one of ${ra}, ${rb}, ${rc} wins`);
      const owner = await store.accounts.getByEmail(target);
      t.ok(owner, 'the e-mail resolves');
      const expectedOwner = ra === 'updated' ? a.id : rb === 'updated' ? b.id : newcomer.id;
      t.equal(owner?.id, expectedOwner, 'to the winner');
      if (ra !== 'updated') t.same(await store.accounts.get(a.id), a, 'loser a unchanged');
      if (rb !== 'updated') t.same(await store.accounts.get(b.id), b, 'loser b unchanged');
    });

    // ---------------------------------------------------------------- sessions
    t.test('sessions: createFamily, getFamily, findToken', async (t) => {
      const store = await fresh(t);
      const f = family(randomUUID());
      const first = token(f);
      await store.sessions.createFamily(f, first);
      t.same(await store.sessions.getFamily(f.id), f);
      t.same(await store.sessions.findToken(first.hash), first);
      t.equal(await store.sessions.getFamily(randomUUID()), undefined, 'unknown family');
      t.equal(await store.sessions.findToken(hash()), undefined, 'unknown token');
    });

    t.test('sessions: rotate marks the old token used and stores the next in the family', async (t) => {
      const store = await fresh(t);
      const f = family(randomUUID());
      const first = token(f);
      await store.sessions.createFamily(f, first);
      const next = nextToken();
      t.same(await store.sessions.rotate(first.hash, next, NOW), { kind: 'rotated', accountId: f.accountId, familyId: f.id });
      const old = await store.sessions.findToken(first.hash);
      t.equal(old?.usedAt, NOW, 'old token marked used at now');
      const stored = await store.sessions.findToken(next.hash);
      t.same(stored, { ...next, familyId: f.id, accountId: f.accountId }, 'next token stored in the family');
      t.notOk(stored?.usedAt, 'next token is unused');
      const third = nextToken();
      t.same(await store.sessions.rotate(next.hash, third, LATER), { kind: 'rotated', accountId: f.accountId, familyId: f.id }, 'the chain continues');
      t.notOk((await store.sessions.getFamily(f.id))?.revokedAt, 'family stays live');
    });

    t.test('sessions: reusing a rotated token revokes the family', async (t) => {
      const store = await fresh(t);
      const f = family(randomUUID());
      const first = token(f);
      await store.sessions.createFamily(f, first);
      const next = nextToken();
      t.equal((await store.sessions.rotate(first.hash, next, NOW)).kind, 'rotated');
      const attacker = nextToken();
      t.same(await store.sessions.rotate(first.hash, attacker, LATER), { kind: 'reused', familyId: f.id });
      t.equal((await store.sessions.getFamily(f.id))?.revokedAt, LATER, 'family revoked at now');
      t.equal(await store.sessions.findToken(attacker.hash), undefined, 'the replacement offered on reuse is not stored');
      t.same(await store.sessions.rotate(next.hash, nextToken(), at(120)), { kind: 'invalid' }, 'the newest token is dead too');
    });

    t.test('sessions: of concurrent rotations of one token exactly one rotates', async (t) => {
      const store = await fresh(t);
      const f = family(randomUUID());
      const first = token(f);
      await store.sessions.createFamily(f, first);
      const results = await Promise.all(Array.from({ length: 5 }, () => store.sessions.rotate(first.hash, nextToken(), NOW)));
      const kinds = results.map((r) => r.kind);
      t.equal(count(kinds, 'rotated'), 1, `exactly one rotated (${kinds.join(', ')})`);
      t.ok(count(kinds, 'reused') >= 1, 'the others are treated as reuse');
      t.equal(count(kinds, 'rotated') + count(kinds, 'reused') + count(kinds, 'invalid'), 5);
      t.ok((await store.sessions.getFamily(f.id))?.revokedAt, 'family revoked');
    });

    t.test('sessions: an expired token is invalid and changes nothing', async (t) => {
      const store = await fresh(t);
      const f = family(randomUUID());
      const first = token(f, { expiresAt: PAST });
      await store.sessions.createFamily(f, first);
      const next = nextToken();
      t.same(await store.sessions.rotate(first.hash, next, NOW), { kind: 'invalid' });
      t.notOk((await store.sessions.findToken(first.hash))?.usedAt, 'not marked used');
      t.equal(await store.sessions.findToken(next.hash), undefined, 'next not stored');
      t.notOk((await store.sessions.getFamily(f.id))?.revokedAt, 'family not revoked');
    });

    t.test('sessions: a token of an expired family is invalid', async (t) => {
      const store = await fresh(t);
      const f = family(randomUUID(), { expiresAt: PAST });
      const first = token(f);
      await store.sessions.createFamily(f, first);
      const next = nextToken();
      t.same(await store.sessions.rotate(first.hash, next, NOW), { kind: 'invalid' });
      t.equal(await store.sessions.findToken(next.hash), undefined, 'next not stored');
    });

    t.test('sessions: an unknown token is invalid', async (t) => {
      const store = await fresh(t);
      const next = nextToken();
      t.same(await store.sessions.rotate(hash(), next, NOW), { kind: 'invalid' });
      t.equal(await store.sessions.findToken(next.hash), undefined, 'next not stored');
    });

    t.test('sessions: a token of a revoked family is invalid', async (t) => {
      const store = await fresh(t);
      const f = family(randomUUID());
      const first = token(f);
      await store.sessions.createFamily(f, first);
      await store.sessions.revokeFamily(f.id, NOW);
      const next = nextToken();
      t.same(await store.sessions.rotate(first.hash, next, LATER), { kind: 'invalid' });
      t.equal(await store.sessions.findToken(next.hash), undefined, 'next not stored');
    });

    t.test('sessions: revokeFamily is idempotent', async (t) => {
      const store = await fresh(t);
      const f = family(randomUUID());
      await store.sessions.createFamily(f, token(f));
      await store.sessions.revokeFamily(f.id, NOW);
      t.same(await store.sessions.getFamily(f.id), { ...f, revokedAt: NOW });
      await store.sessions.revokeFamily(f.id, LATER);
      t.equal((await store.sessions.getFamily(f.id))?.revokedAt, NOW, 'keeps the first revocation time');
      const unknown = randomUUID();
      await store.sessions.revokeFamily(unknown, NOW);
      t.equal(await store.sessions.getFamily(unknown), undefined, 'revoking an unknown family creates nothing');
    });

    t.test('sessions: revokeAllForAccount revokes every family of the account only', async (t) => {
      const store = await fresh(t);
      const accountId = randomUUID();
      const otherId = randomUUID();
      const mine = [family(accountId), family(accountId), family(accountId)];
      const theirs = family(otherId);
      for (const f of [...mine, theirs]) await store.sessions.createFamily(f, token(f));
      await store.sessions.revokeFamily(mine[0]!.id, PAST);
      await store.sessions.revokeAllForAccount(accountId, NOW);
      t.equal((await store.sessions.getFamily(mine[0]!.id))?.revokedAt, PAST, 'an already revoked family keeps its time');
      t.equal((await store.sessions.getFamily(mine[1]!.id))?.revokedAt, NOW);
      t.equal((await store.sessions.getFamily(mine[2]!.id))?.revokedAt, NOW);
      t.notOk((await store.sessions.getFamily(theirs.id))?.revokedAt, "another account's session is untouched");
    });

    t.test('sessions: revokeAllForAccount with keep spares that session', async (t) => {
      const store = await fresh(t);
      const accountId = randomUUID();
      const mine = [family(accountId), family(accountId), family(accountId)];
      const firsts = mine.map((f) => token(f));
      for (const [i, f] of mine.entries()) await store.sessions.createFamily(f, firsts[i]!);
      await store.sessions.revokeAllForAccount(accountId, NOW, mine[1]!.id);
      t.equal((await store.sessions.getFamily(mine[0]!.id))?.revokedAt, NOW);
      t.notOk((await store.sessions.getFamily(mine[1]!.id))?.revokedAt, 'the kept session is live');
      t.equal((await store.sessions.getFamily(mine[2]!.id))?.revokedAt, NOW);
      t.equal((await store.sessions.rotate(firsts[1]!.hash, nextToken(), LATER)).kind, 'rotated', 'the kept session still refreshes');
      t.same(await store.sessions.rotate(firsts[0]!.hash, nextToken(), LATER), { kind: 'invalid' }, 'a revoked one does not');
    });

    // ------------------------------------------------------------ applications
    t.test('applications: create, get, getById', async (t) => {
      const store = await fresh(t);
      const owner = randomUUID();
      const app = application(owner);
      t.equal(await store.applications.create(app, 5), 'created');
      t.same(await store.applications.get(owner, app.id), app);
      t.same(await store.applications.getById(app.id), app);
      t.equal(await store.applications.get(randomUUID(), app.id), undefined, 'another owner does not see it');
      t.equal(await store.applications.get(owner, randomUUID()), undefined, 'unknown id');
      t.equal(await store.applications.getById(randomUUID()), undefined, 'unknown id, unscoped');
    });

    t.test('applications: list is scoped to the owner and ordered by createdAt', async (t) => {
      const store = await fresh(t);
      const owner = randomUUID();
      const other = randomUUID();
      const second = application(owner, { name: 'second', createdAt: at(20) });
      const third = application(owner, { name: 'third', createdAt: at(30) });
      const first = application(owner, { name: 'first', createdAt: at(10) });
      for (const app of [second, third, first]) t.equal(await store.applications.create(app, 10), 'created');
      const foreign = application(other, { createdAt: at(15) });
      t.equal(await store.applications.create(foreign, 10), 'created');
      t.same(await store.applications.list(owner), [first, second, third]);
      t.same(await store.applications.list(other), [foreign]);
      t.same(await store.applications.list(randomUUID()), [], 'an owner without applications');
    });

    t.test('applications: the limit is per account and counts existing applications', async (t) => {
      const store = await fresh(t);
      const owner = randomUUID();
      const a = application(owner);
      const b = application(owner);
      const c = application(owner);
      t.equal(await store.applications.create(a, 2), 'created');
      t.equal(await store.applications.create(b, 2), 'created');
      t.equal(await store.applications.create(c, 2), 'limit');
      t.equal(await store.applications.get(owner, c.id), undefined, 'the refused application is not stored');
      t.equal(await store.applications.getById(c.id), undefined);
      t.equal(await store.applications.create(application(randomUUID()), 2), 'created', 'another account is not limited');
      t.equal(await store.applications.delete(owner, a.id), 'deleted');
      t.equal(await store.applications.create(c, 2), 'created', 'a deleted application frees its slot');
    });

    t.test('applications: of 10 concurrent creates with limit 5 exactly 5 are created', async (t) => {
      const store = await fresh(t);
      const owner = randomUUID();
      const apps = Array.from({ length: 10 }, (_, i) => application(owner, { createdAt: at(i) }));
      const results = await Promise.all(apps.map((app) => store.applications.create(app, 5)));
      t.equal(count(results, 'created'), 5);
      t.equal(count(results, 'limit'), 5);
      const created = apps.filter((_, i) => results[i] === 'created').sort(byId);
      t.same([...(await store.applications.list(owner))].sort(byId), created, 'exactly the created ones are listed');
    });

    t.test('applications: update', async (t) => {
      const store = await fresh(t);
      const owner = randomUUID();
      const app = application(owner);
      await store.applications.create(app, 5);
      const changed: Application = { ...app, name: 'Renamed', status: 'SUSPENDED', tier: 'STANDARD', type: 'STANDARD', updatedAt: LATER };
      t.equal(await store.applications.update(changed), 'updated');
      t.same(await store.applications.get(owner, app.id), changed);
      t.same(await store.applications.getById(app.id), changed);
      t.same(await store.applications.list(owner), [changed]);
      const ghost = application(owner);
      t.equal(await store.applications.update(ghost), 'not-found', 'unknown application');
      t.equal(await store.applications.get(owner, ghost.id), undefined, 'update does not create');
      t.equal(await store.applications.update({ ...app, clientId: randomUUID(), name: 'Hijack' }), 'not-found', 'another owner cannot update it');
      t.same(await store.applications.get(owner, app.id), changed, 'unchanged by the refused update');
    });

    t.test('applications: delete', async (t) => {
      const store = await fresh(t);
      const owner = randomUUID();
      const app = application(owner);
      const kept = application(owner, { createdAt: LATER });
      await store.applications.create(app, 5);
      await store.applications.create(kept, 5);
      t.equal(await store.applications.delete(randomUUID(), app.id), 'not-found', 'another owner cannot delete it');
      t.same(await store.applications.get(owner, app.id), app, 'still there');
      t.equal(await store.applications.delete(owner, app.id), 'deleted');
      t.equal(await store.applications.get(owner, app.id), undefined);
      t.equal(await store.applications.getById(app.id), undefined);
      t.same(await store.applications.list(owner), [kept]);
      t.equal(await store.applications.delete(owner, app.id), 'not-found', 'deleting twice');
      t.equal(await store.applications.delete(owner, randomUUID()), 'not-found', 'unknown application');
    });

    // On a shared keyspace other subtests' applications are listed too: assertions look at this
    // subtest's own (its accounts and clusters are fresh ids).
    t.test('applications: listAll spans accounts, oldest first, and filters by cluster', async (t) => {
      const store = await fresh(t);
      const [alice, bob] = [randomUUID(), randomUUID()];
      const [east, west] = [randomUUID(), randomUUID()];
      const a2 = application(alice, { name: 'a2', clusterId: east, createdAt: at(30) });
      const b1 = application(bob, { name: 'b1', clusterId: west, createdAt: at(20) });
      const a1 = application(alice, { name: 'a1', clusterId: east, createdAt: at(10) });
      for (const app of [a2, b1, a1]) t.equal(await store.applications.create(app, 5), 'created');
      const ours = new Set([a1.id, a2.id, b1.id]);
      const mine = async () => (await store.applications.listAll()).filter((app) => ours.has(app.id));
      t.same(await mine(), [a1, b1, a2], 'every account, oldest first');
      t.same(await store.applications.listAll(east), [a1, a2], 'only those bound to the cluster');
      t.same(await store.applications.listAll(west), [b1]);
      t.same(await store.applications.listAll(randomUUID()), [], 'a cluster without applications');

      const moved = { ...b1, clusterId: east, tier: 'STANDARD' as const, type: 'STANDARD' as const, updatedAt: LATER };
      t.equal(await store.applications.update(moved), 'updated');
      t.same(await store.applications.listAll(east), [a1, moved, a2], 'an update moves it to the other cluster');
      t.same(await store.applications.listAll(west), [], 'and off its old one');
      t.equal(await store.applications.delete(alice, a1.id), 'deleted');
      t.same(await mine(), [moved, a2], 'a deleted application is not listed');
    });

    // ---------------------------------------------------------------- API keys
    t.test('keys: create, get, list', async (t) => {
      const store = await fresh(t);
      const appId = randomUUID();
      const k1 = apiKey(appId, { createdAt: at(1) });
      const k2 = apiKey(appId, { createdAt: at(2) });
      const foreign = apiKey(randomUUID());
      t.equal(await store.keys.create(k1, 5), 'created');
      t.equal(await store.keys.create(k2, 5), 'created');
      t.equal(await store.keys.create(foreign, 5), 'created');
      t.same(await store.keys.get(appId, k1.id), k1, 'every field read back, keySuffix included');
      const { keySuffix: _, ...older } = apiKey(randomUUID(), { createdAt: at(3) });
      t.equal(await store.keys.create(older, 5), 'created');
      t.same(await store.keys.get(older.appId, older.id), older, 'a key made before keySuffix was kept reads back without one');
      t.equal(await store.keys.get(randomUUID(), k1.id), undefined, 'scoped by application');
      t.equal(await store.keys.get(appId, randomUUID()), undefined, 'unknown key');
      t.same([...(await store.keys.list(appId))].sort(byId), [k1, k2].sort(byId), 'list is scoped to the application');
      t.same(await store.keys.list(randomUUID()), [], 'an application without keys');
    });

    t.test('keys: the limit counts only active keys', async (t) => {
      const store = await fresh(t);
      const appId = randomUUID();
      const k1 = apiKey(appId);
      const k2 = apiKey(appId);
      const k3 = apiKey(appId);
      t.equal(await store.keys.create(k1, 2), 'created');
      t.equal(await store.keys.create(k2, 2), 'created');
      t.equal(await store.keys.create(k3, 2), 'limit');
      t.equal(await store.keys.get(appId, k3.id), undefined, 'the refused key is not stored');
      t.equal(await store.keys.create(apiKey(randomUUID()), 2), 'created', 'another application is not limited');
      t.equal(await store.keys.revoke(appId, k1.id, NOW), 'revoked');
      t.equal(await store.keys.create(k3, 2), 'created', 'a revoked key frees its slot');
      t.equal((await store.keys.list(appId)).length, 3, 'the revoked key is still listed');
      t.equal(await activeKeys(store, appId), 2);
      t.equal(await store.keys.create(apiKey(appId), 2), 'limit');
    });

    t.test('keys: concurrent creates respect the limit', async (t) => {
      const store = await fresh(t);
      const appId = randomUUID();
      await store.keys.create(apiKey(appId), 4);
      await store.keys.revoke(appId, (await store.keys.list(appId))[0]!.id, NOW);
      const keys = Array.from({ length: 10 }, () => apiKey(appId));
      const results = await Promise.all(keys.map((k) => store.keys.create(k, 3)));
      t.equal(count(results, 'created'), 3);
      t.equal(count(results, 'limit'), 7);
      t.equal(await activeKeys(store, appId), 3);
      const created = keys.filter((_, i) => results[i] === 'created');
      for (const k of created) t.ok(await store.keys.isActive(appId, k.id), 'a created key is active');
    });

    t.test('keys: revoke is idempotent and keeps the first revocation time', async (t) => {
      const store = await fresh(t);
      const appId = randomUUID();
      const k = apiKey(appId);
      await store.keys.create(k, 5);
      t.equal(await store.keys.revoke(appId, k.id, NOW), 'revoked');
      t.same(await store.keys.get(appId, k.id), { ...k, revokedAt: NOW });
      t.equal(await store.keys.revoke(appId, k.id, LATER), 'revoked', 'revoking again');
      t.equal((await store.keys.get(appId, k.id))?.revokedAt, NOW, 'keeps the first time');
      t.equal(await store.keys.revoke(appId, randomUUID(), NOW), 'not-found', 'unknown key');
      const other = apiKey(randomUUID());
      await store.keys.create(other, 5);
      t.equal(await store.keys.revoke(appId, other.id, NOW), 'not-found', "another application's key");
      t.ok(await store.keys.isActive(other.appId, other.id), 'which stays active');
    });

    t.test('keys: revokeAll returns the number of newly revoked keys', async (t) => {
      const store = await fresh(t);
      const appId = randomUUID();
      const keys = [apiKey(appId), apiKey(appId), apiKey(appId)];
      for (const k of keys) await store.keys.create(k, 5);
      const other = apiKey(randomUUID());
      await store.keys.create(other, 5);
      await store.keys.revoke(appId, keys[0]!.id, PAST);
      t.equal(await store.keys.revokeAll(appId, NOW), 2);
      t.equal(await activeKeys(store, appId), 0);
      t.equal((await store.keys.get(appId, keys[0]!.id))?.revokedAt, PAST, 'an already revoked key keeps its time');
      t.equal((await store.keys.get(appId, keys[1]!.id))?.revokedAt, NOW);
      t.equal((await store.keys.get(appId, keys[2]!.id))?.revokedAt, NOW);
      t.equal(await store.keys.revokeAll(appId, LATER), 0, 'nothing left to revoke');
      t.equal((await store.keys.get(appId, keys[1]!.id))?.revokedAt, NOW, 'a second revokeAll keeps times');
      t.ok(await store.keys.isActive(other.appId, other.id), "another application's key is untouched");
      t.equal(await store.keys.revokeAll(randomUUID(), NOW), 0, 'an application without keys');
    });

    t.test('keys: rotate', async (t) => {
      const store = await fresh(t);
      const appId = randomUUID();
      const k1 = apiKey(appId);
      const k2 = apiKey(appId);
      await store.keys.create(k1, 2);
      await store.keys.create(k2, 2);
      const next = apiKey(appId, { createdAt: LATER });
      t.equal(await store.keys.rotate(appId, k1.id, next, LATER), 'rotated', 'rotation works at the limit');
      t.equal((await store.keys.get(appId, k1.id))?.revokedAt, LATER, 'the old key is revoked');
      t.same(await store.keys.get(appId, next.id), next, 'the next key is stored');
      t.ok(await store.keys.isActive(appId, next.id));
      t.equal(await activeKeys(store, appId), 2, 'the active count is unchanged');

      const afterRevoked = apiKey(appId);
      t.equal(await store.keys.rotate(appId, k1.id, afterRevoked, at(120)), 'revoked', 'rotating a revoked key');
      t.equal(await store.keys.get(appId, afterRevoked.id), undefined, 'stores nothing');
      t.equal((await store.keys.get(appId, k1.id))?.revokedAt, LATER, 'and keeps the revocation time');

      const afterUnknown = apiKey(appId);
      t.equal(await store.keys.rotate(appId, randomUUID(), afterUnknown, at(120)), 'not-found', 'rotating an unknown key');
      t.equal(await store.keys.get(appId, afterUnknown.id), undefined, 'stores nothing');

      const foreignApp = randomUUID();
      const afterForeign = apiKey(foreignApp);
      t.equal(await store.keys.rotate(foreignApp, k2.id, afterForeign, at(120)), 'not-found', "another application's key");
      t.ok(await store.keys.isActive(appId, k2.id), 'which stays active');
      t.equal(await store.keys.get(foreignApp, afterForeign.id), undefined, 'stores nothing');
      t.equal(await activeKeys(store, appId), 2);
    });

    t.test('keys: of concurrent rotations of one key exactly one rotates', async (t) => {
      const store = await fresh(t);
      const appId = randomUUID();
      const k = apiKey(appId);
      await store.keys.create(k, 3);
      const nexts = Array.from({ length: 5 }, () => apiKey(appId));
      const results = await Promise.all(nexts.map((n) => store.keys.rotate(appId, k.id, n, NOW)));
      t.equal(count(results, 'rotated'), 1);
      t.equal(count(results, 'revoked'), 4);
      t.equal(await activeKeys(store, appId), 1, 'the active count is unchanged');
      t.equal((await store.keys.list(appId)).length, 2, 'only the winning replacement is stored');
    });

    t.test('keys: isActive', async (t) => {
      const store = await fresh(t);
      const appId = randomUUID();
      const active = apiKey(appId);
      const revoked = apiKey(appId);
      const foreign = apiKey(randomUUID());
      for (const k of [active, revoked, foreign]) await store.keys.create(k, 5);
      await store.keys.revoke(appId, revoked.id, NOW);
      t.equal(await store.keys.isActive(appId, active.id), true, 'active key');
      t.equal(await store.keys.isActive(appId, revoked.id), false, 'revoked key');
      t.equal(await store.keys.isActive(appId, randomUUID()), false, 'unknown key');
      t.equal(await store.keys.isActive(appId, foreign.id), false, "another application's key");
      t.equal(await store.keys.isActive(foreign.appId, foreign.id), true, 'which is active in its own application');
    });

    // ---------------------------------------------------------------- clusters
    t.test('clusters: upsert creates, then updates the endpoint keeping the id', async (t) => {
      const store = await fresh(t);
      const created = await store.clusters.upsert('demo', 'http://a.example:8081', NOW);
      t.match(created, { name: 'demo', endpoint: 'http://a.example:8081', status: 'ACTIVE', createdAt: NOW });
      t.type(created.id, 'string');
      t.ok(created.id.length > 0, 'has an id');
      t.same(await store.clusters.get(created.id), created);
      const updated = await store.clusters.upsert('demo', 'http://b.example:8081', LATER);
      t.equal(updated.id, created.id, 'the id of a name never changes');
      t.equal(updated.endpoint, 'http://b.example:8081');
      t.equal(updated.createdAt, NOW, 'createdAt is kept');
      t.equal(updated.status, 'ACTIVE');
      t.same(await store.clusters.get(created.id), updated);
      const other = await store.clusters.upsert('other', 'http://c.example:8081', NOW);
      t.not(other.id, created.id, 'another name gets another id');
      t.equal((await store.clusters.get(created.id))?.endpoint, 'http://b.example:8081', 'the first is untouched');
      t.equal(await store.clusters.get(randomUUID()), undefined, 'unknown id');
    });

    t.test('clusters: concurrent upserts of one name agree on the id', async (t) => {
      const store = await fresh(t);
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => store.clusters.upsert('race', `http://n${i}.example`, NOW)));
      const ids = new Set(results.map((c) => c.id));
      t.equal(ids.size, 1, 'one id');
      const [id] = [...ids];
      const stored = await store.clusters.get(id!);
      t.ok(stored, 'resolvable');
      t.ok(results.some((c) => c.endpoint === stored?.endpoint), 'the endpoint is one of those written');
    });

    t.test('clusters: a status is set when given and kept otherwise', async (t) => {
      const store = await fresh(t);
      const created = await store.clusters.upsert('eu-1', 'http://a.example', NOW);
      t.equal(created.status, 'ACTIVE', 'a new cluster is ACTIVE');
      const draining = await store.clusters.upsert('eu-1', 'http://a.example', LATER, 'DRAINING');
      t.same(draining, { ...created, status: 'DRAINING' }, 'the status is set; id, endpoint and createdAt kept');
      t.same(await store.clusters.get(created.id), draining);
      // What the service does at every start: register its own cluster with its endpoint.
      const restarted = await store.clusters.upsert('eu-1', 'http://b.example', at(120));
      t.same(restarted, { ...created, endpoint: 'http://b.example', status: 'DRAINING' }, 'an upsert without a status keeps the stored one');
      t.same(await store.clusters.get(created.id), restarted);
      t.same(await store.clusters.getByName('eu-1'), restarted);
      t.equal((await store.clusters.upsert('eu-1', 'http://b.example', at(180), 'OFFLINE')).status, 'OFFLINE');
      t.equal((await store.clusters.get(created.id))?.status, 'OFFLINE');
      t.equal((await store.clusters.upsert('eu-1', 'http://b.example', at(240), 'ACTIVE')).status, 'ACTIVE', 'and back to ACTIVE');
      const born = await store.clusters.upsert('cold', 'http://c.example', NOW, 'OFFLINE');
      t.match(born, { name: 'cold', endpoint: 'http://c.example', status: 'OFFLINE', createdAt: NOW }, 'a new cluster may start with a status');
      t.same(await store.clusters.get(born.id), born);
    });

    t.test('clusters: getByName, and list by name', async (t) => {
      const store = await fresh(t);
      t.same(await store.clusters.list(), [], 'no clusters at first');
      const b = await store.clusters.upsert('b-two', 'http://b.example', NOW);
      const c = await store.clusters.upsert('c-three', 'https://c.example', NOW, 'DRAINING');
      const a = await store.clusters.upsert('a-one', 'http://a.example', LATER);
      t.same(await store.clusters.getByName('a-one'), a);
      t.same(await store.clusters.getByName('c-three'), c);
      t.equal(await store.clusters.getByName('nope'), undefined, 'unknown name');
      t.same(await store.clusters.list(), [a, b, c], 'every cluster, by name');
      const offline = await store.clusters.upsert('b-two', 'http://b2.example', at(120), 'OFFLINE');
      t.same(await store.clusters.list(), [a, offline, c], 'with their current endpoint and status');
      t.same(offline, { ...b, endpoint: 'http://b2.example', status: 'OFFLINE' });
    });

    // ------------------------------------------------------------ signing keys
    t.test('signingKeys: ensure stores the first candidate and returns it afterwards', async (t) => {
      const store = await fresh(t);
      t.same(await store.signingKeys.list(), [], 'no keys at first');
      const first = generateSigningKey(new Date(NOW));
      t.same(await store.signingKeys.ensure(first), first, 'the first candidate is stored');
      t.same(await store.signingKeys.list(), [first]);
      const second = generateSigningKey(new Date(LATER));
      const returned = await store.signingKeys.ensure(second);
      t.same(returned, first, 'returns the existing key');
      t.not(returned.kid, second.kid, 'not the new candidate');
      t.same(await store.signingKeys.list(), [first], 'the new candidate is not stored');
    });

    t.test('signingKeys: a rotation stores the new key and retires the others, keeping an earlier retirement', async (t) => {
      const store = await fresh(t);
      const first = generateSigningKey(new Date(NOW));
      await store.signingKeys.ensure(first);
      const second = generateSigningKey(new Date(at(10)), new Date(at(30)));
      await store.signingKeys.rotate(second, at(100));
      t.same(await store.signingKeys.list(), [{ ...first, retiresAt: at(100) }, second], 'oldest first; the replaced key retires');
      const third = generateSigningKey(new Date(at(20)), new Date(at(40)));
      await store.signingKeys.rotate(third, at(200));
      t.same(await store.signingKeys.list(), [{ ...first, retiresAt: at(100) }, { ...second, retiresAt: at(200) }, third], 'an earlier retirement is kept');
      t.equal((await store.signingKeys.ensure(generateSigningKey(new Date(LATER)))).kid, first.kid, 'ensure returns the first key (as stored now) and adds none');
      t.equal((await store.signingKeys.list()).length, 3);
      await t.rejects(store.signingKeys.rotate(third, at(300)), { code: 'KEY_ROTATION_CONFLICT' }, 'a kid stored already is refused');
    });

    t.test('signingKeys: concurrent ensure on a fresh store agrees on one key', async (t) => {
      const store = await fresh(t);
      const candidates = Array.from({ length: 5 }, () => generateSigningKey(new Date(NOW)));
      const results = await Promise.all(candidates.map((c) => store.signingKeys.ensure(c)));
      t.equal(new Set(results.map((k) => k.kid)).size, 1, 'all callers get the same key');
      t.same(await store.signingKeys.list(), [results[0]], 'only that key is stored');
    });

    mfaStoreConformance(t, fresh);
    usageStoreConformance(t, fresh);
    webhookStoreConformance(t, fresh);
    beforeSendStoreConformance(t, fresh);
    attachmentSettingsStoreConformance(t, fresh);
    pushSettingsStoreConformance(t, fresh);
  });
}
