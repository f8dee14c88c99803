import { randomUUID } from 'node:crypto';
import { open, type Database, type RootDatabase } from 'lmdb';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../../common/files/index.ts';
import { KeyRotationConflict, rotatedKeys, type SigningKey } from '../../common/jwt/index.ts';
import type {
  Account,
  AccountStore,
  ApiKeyRecord,
  ApiKeyStore,
  Application,
  ApplicationStore,
  Cluster,
  ClusterStatus,
  ClusterStore,
  ControlStore,
  MfaStore,
  RefreshTokenRecord,
  RotateResult,
  SessionFamily,
  SessionStore,
  SigningKeyStore,
  UsageStore,
  WebhookStore,
} from './types.ts';
import type { BeforeSendStore } from './before-send-types.ts';
import { LmdbBeforeSend } from './lmdb-before-send.ts';
import type { AttachmentSettingsStore } from './attachment-settings-types.ts';
import { LmdbAttachmentSettings } from './lmdb-attachment-settings.ts';
import { LmdbMfa } from './lmdb-mfa.ts';
import { LmdbUsage } from './lmdb-usage.ts';
import { LmdbWebhooks } from './lmdb-webhooks.ts';

type Key = (string | number)[];
type Db = Database<unknown, Key>;

/** Upper bound of a tuple prefix range: ids are UUIDs or ISO timestamps, all below U+FFFF. */
const END = '\uffff';

function* rangeValues<T>(db: Db, prefix: Key): Generator<T> {
  for (const { value } of db.getRange({ start: prefix, end: [...prefix, END] })) yield value as T;
}

/**
 * The embedded control store. One LMDB environment, one named database per table; keys are
 * tuples led by the partition (account, application), mirroring the wide-column layout. Writes that
 * must be atomic with a read (uniqueness, limits, rotation) run inside one write transaction.
 */
export class LmdbControlStore implements ControlStore {
  readonly accounts: AccountStore;
  readonly sessions: SessionStore;
  readonly applications: ApplicationStore;
  readonly keys: ApiKeyStore;
  readonly clusters: ClusterStore;
  readonly mfa: MfaStore;
  readonly usage: UsageStore;
  readonly webhooks: WebhookStore;
  readonly beforeSend: BeforeSendStore;
  readonly attachmentSettings: AttachmentSettingsStore;
  readonly signingKeys: SigningKeyStore;

  private constructor(private readonly root: RootDatabase) {
    const db = (name: string) => root.openDB<unknown, Key>({ name, encoding: 'msgpack' });
    this.accounts = new LmdbAccounts(root, db('accounts'));
    this.sessions = new LmdbSessions(root, db('sessions'));
    this.applications = new LmdbApplications(root, db('applications'));
    this.keys = new LmdbApiKeys(root, db('api_keys'));
    this.clusters = new LmdbClusters(root, db('clusters'));
    this.mfa = new LmdbMfa(root, db('mfa'));
    this.usage = new LmdbUsage(root, db('usage'));
    this.webhooks = new LmdbWebhooks(root, db('webhooks'));
    this.beforeSend = new LmdbBeforeSend(root, db('before_send'));
    this.attachmentSettings = new LmdbAttachmentSettings(db('attachment_settings'));
    this.signingKeys = new LmdbSigningKeys(root, db('signing_keys'));
  }

  /**
   * Opens (or creates) the environment in directory `path`. It holds the signing keys' private
   * halves, so a directory it creates is 0700 and its files 0600 (narrowing existing ones is the
   * caller's: see tightenPrivateDir).
   */
  static open(path: string): LmdbControlStore {
    ensurePrivateDir(path);
    // A write resolves only once it is synced to disk (lmdb's default, overlapping sync, resolves at
    // commit and syncs later): an acknowledged write survives power loss, not just a crash.
    // `permissionsMode` (the mode of data.mdb and lock.mdb) is read by lmdb but absent from its typings.
    const options = { path, maxDbs: 16, compression: false, overlappingSync: false, permissionsMode: PRIVATE_FILE_MODE };
    return new LmdbControlStore(open(options));
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}

class LmdbAccounts implements AccountStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Db,
  ) {}

  create(account: Account): Promise<'created' | 'exists'> {
    return this.root.transaction(() => {
      if (this.db.get(['e', account.email]) !== undefined) return 'exists' as const;
      this.db.put(['e', account.email], account.id);
      this.db.put(['a', account.id], account);
      return 'created' as const;
    });
  }

  async get(id: string): Promise<Account | undefined> {
    return this.db.get(['a', id]) as Account | undefined;
  }

  async getByEmail(email: string): Promise<Account | undefined> {
    const id = this.db.get(['e', email]) as string | undefined;
    return id === undefined ? undefined : (this.db.get(['a', id]) as Account | undefined);
  }

  update(account: Account): Promise<'updated' | 'not-found' | 'email-taken'> {
    return this.root.transaction(() => {
      const current = this.db.get(['a', account.id]) as Account | undefined;
      if (!current) return 'not-found' as const;
      if (current.email !== account.email) {
        if (this.db.get(['e', account.email]) !== undefined) return 'email-taken' as const;
        this.db.remove(['e', current.email]);
        this.db.put(['e', account.email], account.id);
      }
      this.db.put(['a', account.id], account);
      return 'updated' as const;
    });
  }
}

class LmdbSessions implements SessionStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Db,
  ) {}

  async createFamily(family: SessionFamily, first: RefreshTokenRecord): Promise<void> {
    await this.root.transaction(() => {
      this.db.put(['f', family.id], family);
      this.db.put(['af', family.accountId, family.id], true);
      this.db.put(['t', first.hash], first);
    });
  }

  async getFamily(id: string): Promise<SessionFamily | undefined> {
    return this.db.get(['f', id]) as SessionFamily | undefined;
  }

  async findToken(hash: string): Promise<RefreshTokenRecord | undefined> {
    return this.db.get(['t', hash]) as RefreshTokenRecord | undefined;
  }

  rotate(oldHash: string, next: Omit<RefreshTokenRecord, 'familyId' | 'accountId'>, now: string): Promise<RotateResult> {
    return this.root.transaction((): RotateResult => {
      const token = this.db.get(['t', oldHash]) as RefreshTokenRecord | undefined;
      if (!token) return { kind: 'invalid' };
      const family = this.db.get(['f', token.familyId]) as SessionFamily | undefined;
      if (!family || family.revokedAt) return { kind: 'invalid' };
      if (token.usedAt) {
        this.db.put(['f', family.id], { ...family, revokedAt: now });
        return { kind: 'reused', familyId: family.id };
      }
      if (token.expiresAt <= now || family.expiresAt <= now) return { kind: 'invalid' };
      this.db.put(['t', oldHash], { ...token, usedAt: now });
      this.db.put(['t', next.hash], { ...next, familyId: family.id, accountId: family.accountId });
      return { kind: 'rotated', accountId: family.accountId, familyId: family.id };
    });
  }

  async revokeFamily(id: string, now: string): Promise<void> {
    await this.root.transaction(() => {
      const family = this.db.get(['f', id]) as SessionFamily | undefined;
      if (family && !family.revokedAt) this.db.put(['f', id], { ...family, revokedAt: now });
    });
  }

  async revokeAllForAccount(accountId: string, now: string, keep?: string): Promise<void> {
    await this.root.transaction(() => {
      for (const { key } of this.db.getRange({ start: ['af', accountId], end: ['af', accountId, END] })) {
        const id = String(key[2]);
        if (id === keep) continue;
        const family = this.db.get(['f', id]) as SessionFamily | undefined;
        if (family && !family.revokedAt) this.db.put(['f', id], { ...family, revokedAt: now });
      }
    });
  }
}

class LmdbApplications implements ApplicationStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Db,
  ) {}

  create(app: Application, limit: number): Promise<'created' | 'limit'> {
    return this.root.transaction(() => {
      let count = 0;
      for (const _ of this.db.getKeys({ start: ['c', app.clientId], end: ['c', app.clientId, END] })) count++;
      if (count >= limit) return 'limit' as const;
      this.db.put(['c', app.clientId, app.id], app);
      this.db.put(['i', app.id], app.clientId);
      return 'created' as const;
    });
  }

  async list(clientId: string): Promise<Application[]> {
    return [...rangeValues<Application>(this.db, ['c', clientId])].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async get(clientId: string, appId: string): Promise<Application | undefined> {
    return this.db.get(['c', clientId, appId]) as Application | undefined;
  }

  async getById(appId: string): Promise<Application | undefined> {
    const clientId = this.db.get(['i', appId]) as string | undefined;
    return clientId === undefined ? undefined : this.get(clientId, appId);
  }

  async listAll(clusterId?: string): Promise<Application[]> {
    return [...rangeValues<Application>(this.db, ['c'])]
      .filter((app) => clusterId === undefined || app.clusterId === clusterId)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  update(app: Application): Promise<'updated' | 'not-found'> {
    return this.root.transaction(() => {
      if (this.db.get(['c', app.clientId, app.id]) === undefined) return 'not-found' as const;
      this.db.put(['c', app.clientId, app.id], app);
      return 'updated' as const;
    });
  }

  delete(clientId: string, appId: string): Promise<'deleted' | 'not-found'> {
    return this.root.transaction(() => {
      if (this.db.get(['c', clientId, appId]) === undefined) return 'not-found' as const;
      this.db.remove(['c', clientId, appId]);
      this.db.remove(['i', appId]);
      return 'deleted' as const;
    });
  }
}

class LmdbApiKeys implements ApiKeyStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Db,
  ) {}

  private activeCount(appId: string): number {
    let n = 0;
    for (const key of rangeValues<ApiKeyRecord>(this.db, ['k', appId])) if (!key.revokedAt) n++;
    return n;
  }

  create(key: ApiKeyRecord, limit: number): Promise<'created' | 'limit'> {
    return this.root.transaction(() => {
      if (this.activeCount(key.appId) >= limit) return 'limit' as const;
      this.db.put(['k', key.appId, key.id], key);
      return 'created' as const;
    });
  }

  async list(appId: string): Promise<ApiKeyRecord[]> {
    return [...rangeValues<ApiKeyRecord>(this.db, ['k', appId])].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async get(appId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
    return this.db.get(['k', appId, keyId]) as ApiKeyRecord | undefined;
  }

  revoke(appId: string, keyId: string, now: string): Promise<'revoked' | 'not-found'> {
    return this.root.transaction(() => {
      const key = this.db.get(['k', appId, keyId]) as ApiKeyRecord | undefined;
      if (!key) return 'not-found' as const;
      if (!key.revokedAt) this.db.put(['k', appId, keyId], { ...key, revokedAt: now });
      return 'revoked' as const;
    });
  }

  revokeAll(appId: string, now: string): Promise<number> {
    return this.root.transaction(() => {
      let n = 0;
      for (const key of [...rangeValues<ApiKeyRecord>(this.db, ['k', appId])]) {
        if (key.revokedAt) continue;
        this.db.put(['k', appId, key.id], { ...key, revokedAt: now });
        n++;
      }
      return n;
    });
  }

  rotate(appId: string, keyId: string, next: ApiKeyRecord, now: string): Promise<'rotated' | 'not-found' | 'revoked'> {
    return this.root.transaction(() => {
      const key = this.db.get(['k', appId, keyId]) as ApiKeyRecord | undefined;
      if (!key) return 'not-found' as const;
      if (key.revokedAt) return 'revoked' as const;
      this.db.put(['k', appId, keyId], { ...key, revokedAt: now });
      this.db.put(['k', appId, next.id], next);
      return 'rotated' as const;
    });
  }

  async isActive(appId: string, keyId: string): Promise<boolean> {
    const key = this.db.get(['k', appId, keyId]) as ApiKeyRecord | undefined;
    return key !== undefined && !key.revokedAt;
  }
}

class LmdbClusters implements ClusterStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Db,
  ) {}

  upsert(name: string, endpoint: string, now: string, status?: ClusterStatus): Promise<Cluster> {
    return this.root.transaction(() => {
      const current = this.db.get(['n', name]) as Cluster | undefined;
      const cluster: Cluster = current
        ? { ...current, endpoint, status: status ?? current.status }
        : { id: randomUUID(), name, endpoint, status: status ?? 'ACTIVE', createdAt: now };
      this.db.put(['n', name], cluster);
      this.db.put(['i', cluster.id], name);
      return cluster;
    });
  }

  async get(id: string): Promise<Cluster | undefined> {
    const name = this.db.get(['i', id]) as string | undefined;
    return name === undefined ? undefined : this.getByName(name);
  }

  async getByName(name: string): Promise<Cluster | undefined> {
    return this.db.get(['n', name]) as Cluster | undefined;
  }

  async list(): Promise<Cluster[]> {
    return [...rangeValues<Cluster>(this.db, ['n'])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

class LmdbSigningKeys implements SigningKeyStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Db,
  ) {}

  ensure(candidate: SigningKey): Promise<SigningKey> {
    return this.root.transaction(() => {
      const existing = [...rangeValues<SigningKey>(this.db, ['k'])][0];
      if (existing) return existing;
      this.db.put(['k', candidate.createdAt, candidate.kid], candidate);
      return candidate;
    });
  }

  async list(): Promise<SigningKey[]> {
    return [...rangeValues<SigningKey>(this.db, ['k'])];
  }

  // One write transaction: it reads and writes the keys alone, so no rotation ever conflicts here.
  async rotate(next: SigningKey, retireAt: string): Promise<void> {
    const done = await this.root.transaction(() => {
      const keys = [...rangeValues<SigningKey>(this.db, ['k'])];
      if (keys.some((k) => k.kid === next.kid)) return false;
      for (const k of rotatedKeys(keys, next, retireAt)) this.db.put(['k', k.createdAt, k.kid], k);
      return true;
    });
    if (!done) throw new KeyRotationConflict();
  }
}
