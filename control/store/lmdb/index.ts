import { open, type RootDatabase } from 'lmdb';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../../../common/files/index.ts';
import type { AccountStore, ApiKeyStore, ApplicationStore, AttachmentSettingsStore, BeforeSendStore, ClusterStore, ControlStore, MfaStore, PushSettingsStore, SessionStore, SigningKeyStore, UsageStore, WebhookStore } from '../types.ts';
import { LmdbAccounts, LmdbSessions } from './accounts.ts';
import { LmdbApiKeys, LmdbApplications } from './apps.ts';
import { LmdbAttachmentSettings } from './attachment-settings.ts';
import { LmdbPushSettings } from './push-settings.ts';
import { LmdbBeforeSend } from './before-send.ts';
import { LmdbClusters } from './clusters.ts';
import { LmdbMfa } from './mfa.ts';
import type { Key } from './shared.ts';
import { LmdbSigningKeys } from './signing-keys.ts';
import { LmdbUsage } from './usage.ts';
import { LmdbWebhooks } from './webhooks.ts';

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
  readonly pushSettings: PushSettingsStore;
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
    this.pushSettings = new LmdbPushSettings(root, db('push_settings'));
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
