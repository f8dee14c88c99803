import type { SigningKeyStore } from '../../common/jwt/index.ts';
import type { UsageStore } from './types/usage.ts';
import type { WebhookStore } from './types/webhooks.ts';
import type { BeforeSendStore } from './types/before-send.ts';
import type { AttachmentSettingsStore } from './types/attachment-settings.ts';
import type { PushSettingsStore } from './types/push-settings.ts';

export type AppStatus = 'ACTIVE' | 'SUSPENDED';
/** DEMO: the default, with a ceiling of concurrent users (DEMO_MAX_CONCURRENT_USERS); STANDARD: none. */
export type Tier = 'DEMO' | 'STANDARD';
export const TIERS: readonly Tier[] = ['DEMO', 'STANDARD'];
/**
 * ACTIVE: applications may be moved onto it (the default). DRAINING: none may be moved onto it; its
 * applications keep working. OFFLINE: the same, and it is not serving.
 */
export type ClusterStatus = 'ACTIVE' | 'DRAINING' | 'OFFLINE';
export const CLUSTER_STATUSES: readonly ClusterStatus[] = ['ACTIVE', 'DRAINING', 'OFFLINE'];

export interface Account {
  id: string;
  /** Stored lower-cased; unique. */
  email: string;
  companyName: string;
  role: 'CLIENT';
  /** scrypt output, base64; the salt is per account. */
  passwordHash: string;
  passwordSalt: string;
  createdAt: string;
  updatedAt: string;
}

export interface SessionFamily {
  id: string;
  accountId: string;
  createdAt: string;
  /** Absolute end of the family: refreshing never extends past it. */
  expiresAt: string;
  revokedAt?: string;
}

export interface RefreshTokenRecord {
  /** SHA-256 of the token; the token itself is never stored. */
  hash: string;
  familyId: string;
  accountId: string;
  expiresAt: string;
  usedAt?: string;
}

export interface Application {
  id: string;
  clientId: string;
  name: string;
  status: AppStatus;
  type: Tier;
  tier: Tier;
  clusterId: string;
  createdAt: string;
  updatedAt: string;
}

export interface ApiKeyRecord {
  id: string;
  appId: string;
  /** SHA-256 of the token; the token is shown once and never stored. */
  tokenHash: string;
  keyPrefix: string;
  /** The token's last 4 characters (from its signature: they tell keys apart); absent on keys made before it was kept. */
  keySuffix?: string;
  audience: string;
  tier: Tier;
  createdAt: string;
  revokedAt?: string;
}

export interface Cluster {
  id: string;
  name: string;
  endpoint: string;
  status: ClusterStatus;
  createdAt: string;
}

export type RotateResult =
  | { kind: 'rotated'; accountId: string; familyId: string }
  | { kind: 'reused'; familyId: string }
  | { kind: 'invalid' };

/** Accounts, unique by e-mail. */
export interface AccountStore {
  /** Atomic on the e-mail: of two concurrent creates with one e-mail, exactly one returns 'created'. */
  create(account: Account): Promise<'created' | 'exists'>;
  get(id: string): Promise<Account | undefined>;
  getByEmail(email: string): Promise<Account | undefined>;
  /** Replaces the account; an e-mail change is atomic with its uniqueness check. */
  update(account: Account): Promise<'updated' | 'not-found' | 'email-taken'>;
}

/**
 * Refresh-token families. A family is one login; each refresh rotates its token. Presenting a token
 * that was already rotated is treated as theft and revokes the whole family.
 */
export interface SessionStore {
  createFamily(family: SessionFamily, first: RefreshTokenRecord): Promise<void>;
  getFamily(id: string): Promise<SessionFamily | undefined>;
  /**
   * Atomically: if `oldHash` is unused, unexpired and its family live, mark it used and store `next`
   * in the same family ('rotated'); if it was already used, revoke its family ('reused').
   */
  rotate(oldHash: string, next: Omit<RefreshTokenRecord, 'familyId' | 'accountId'>, now: string): Promise<RotateResult>;
  /** Idempotent. */
  revokeFamily(id: string, now: string): Promise<void>;
  /** Revokes every session of the account except `keep` (the caller's own, when given). */
  revokeAllForAccount(accountId: string, now: string, keep?: string): Promise<void>;
  findToken(hash: string): Promise<RefreshTokenRecord | undefined>;
}

/** Applications, partitioned by owning account; every read is scoped by that owner. */
export interface ApplicationStore {
  /** Atomic with the count: never more than `limit` applications per account. */
  create(app: Application, limit: number): Promise<'created' | 'limit'>;
  list(clientId: string): Promise<Application[]>;
  /** Undefined when the application does not exist or belongs to another account. */
  get(clientId: string, appId: string): Promise<Application | undefined>;
  /** Unscoped lookup for operator commands only. */
  getById(appId: string): Promise<Application | undefined>;
  /**
   * Every application of every account, oldest first; only those bound to `clusterId` when given.
   * For operator commands only: it reads the whole table.
   */
  listAll(clusterId?: string): Promise<Application[]>;
  update(app: Application): Promise<'updated' | 'not-found'>;
  delete(clientId: string, appId: string): Promise<'deleted' | 'not-found'>;
}

/** API keys, partitioned by application. */
export interface ApiKeyStore {
  /** Atomic with the count: never more than `limit` active keys per application. */
  create(key: ApiKeyRecord, limit: number): Promise<'created' | 'limit'>;
  list(appId: string): Promise<ApiKeyRecord[]>;
  get(appId: string, keyId: string): Promise<ApiKeyRecord | undefined>;
  /** Idempotent: revoking a revoked key keeps its first revocation time. */
  revoke(appId: string, keyId: string, now: string): Promise<'revoked' | 'not-found'>;
  revokeAll(appId: string, now: string): Promise<number>;
  /** Atomically revokes `keyId` and stores `next` (so rotation never changes the active count). */
  rotate(appId: string, keyId: string, next: ApiKeyRecord, now: string): Promise<'rotated' | 'not-found' | 'revoked'>;
  /** True only for an existing, unrevoked key of that application. The cluster's hot check. */
  isActive(appId: string, keyId: string): Promise<boolean>;
}

/** The registry of clusters that applications are bound to. */
export interface ClusterStore {
  /**
   * Creates the cluster by name or updates its endpoint; the id of a name never changes. Sets the
   * status when `status` is given; otherwise a new cluster is ACTIVE and an existing one keeps its
   * status (so the service registering its own cluster at start never undoes the operator's).
   */
  upsert(name: string, endpoint: string, now: string, status?: ClusterStatus): Promise<Cluster>;
  get(id: string): Promise<Cluster | undefined>;
  getByName(name: string): Promise<Cluster | undefined>;
  /** Every cluster, by name. */
  list(): Promise<Cluster[]>;
}

/** An account's second factor (TOTP, RFC 6238). */
export interface MfaState {
  /** Base32 secret of an enrolment not yet confirmed: it has no effect until confirmed. */
  pendingSecret?: string;
  /** Base32 secret of the confirmed enrolment; MFA is on while it is set. */
  secret?: string;
  enabledAt?: string;
  /** The last TOTP time step a code was accepted for: a code is accepted once, a later step only after it. */
  lastStep: number;
}

/**
 * Accounts' TOTP enrolments, their single-use recovery codes (stored hashed) and the login
 * challenges (`mfaToken`s) already used. Every "once" below is atomic: of two concurrent calls
 * exactly one succeeds.
 */
export interface MfaStore {
  get(accountId: string): Promise<MfaState | undefined>;
  /** Stores a pending secret (replacing a pending one); 'enabled' (and nothing stored) when MFA is on. */
  begin(accountId: string, secret: string): Promise<'pending' | 'enabled'>;
  /**
   * Turns MFA on with `secret` if it is still the pending one ('stale' otherwise), replacing the
   * recovery codes with `recoveryHashes` and recording `step` as used.
   */
  confirm(accountId: string, secret: string, recoveryHashes: string[], step: number, now: string): Promise<'enabled' | 'stale'>;
  /** Accepts `step` once: true only when it is later than the last accepted step. */
  useStep(accountId: string, step: number): Promise<boolean>;
  /** Uses a recovery code once: true only for an unused code of the account. */
  useRecoveryCode(accountId: string, hash: string, now: string): Promise<boolean>;
  unusedRecoveryCodes(accountId: string): Promise<number>;
  /** Turns MFA off and forgets the secret, any pending one and the recovery codes. */
  disable(accountId: string): Promise<void>;
  /** Whether a login challenge was used (a read: the use itself is `useChallenge`). */
  challengeUsed(id: string): Promise<boolean>;
  /** Uses a login challenge once: false when it was used before. Remembered at least until `expiresAt` (ms). */
  useChallenge(id: string, expiresAtMs: number): Promise<boolean>;
}

export type { UsageDelta, UsageSnapshot, UsageStore } from './types/usage.ts';
export type { WebhookDelivery, WebhookEndpoint, WebhookStore } from './types/webhooks.ts';
export type { BeforeSendHook, BeforeSendStore } from './types/before-send.ts';
export type { AttachmentSettingsStore, StoredAttachmentSettings } from './types/attachment-settings.ts';
export type { PushDeliveryRecord, PushPartValues, PushSettingsStore, PushWebPart } from './types/push-settings.ts';

/** The control service's signing keys (contract in common/jwt/key-ring.ts); public halves are published as JWKS. */
export type { SigningKeyStore };

export interface ControlStore {
  accounts: AccountStore;
  sessions: SessionStore;
  applications: ApplicationStore;
  keys: ApiKeyStore;
  clusters: ClusterStore;
  mfa: MfaStore;
  usage: UsageStore;
  webhooks: WebhookStore;
  beforeSend: BeforeSendStore;
  attachmentSettings: AttachmentSettingsStore;
  pushSettings: PushSettingsStore;
  signingKeys: SigningKeyStore;
  close(): Promise<void>;
}
