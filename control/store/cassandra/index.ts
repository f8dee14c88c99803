import { CassandraSigningKeys, cql, type CassandraClient } from '../../../common/cassandra/index.ts';
import type { ControlStore } from '../types.ts';
import { CassandraAccounts, CassandraSessions } from './accounts.ts';
import { CassandraApiKeys, CassandraApplications } from './apps.ts';
import { CassandraClusters } from './clusters.ts';
import { CassandraMfa } from './mfa.ts';
import { CassandraUsage } from './usage.ts';
import { CassandraWebhooks } from './webhooks.ts';
import { CassandraBeforeSend } from './before-send.ts';
import { CassandraAttachmentSettings } from './attachment-settings.ts';
import { CassandraPushSettings } from './push-settings.ts';
export { controlMigrations } from './schema.ts';

/**
 * The control store on Cassandra or ScyllaDB. `scope` separates the cluster registry and signing
 * keys of control deployments sharing one keyspace. The client is the caller's to close.
 */
export class CassandraControlStore implements ControlStore {
  readonly accounts: CassandraAccounts;
  readonly sessions: CassandraSessions;
  readonly applications: CassandraApplications;
  readonly keys: CassandraApiKeys;
  readonly clusters: CassandraClusters;
  readonly mfa: CassandraMfa;
  readonly usage: CassandraUsage;
  readonly webhooks: CassandraWebhooks;
  readonly beforeSend: CassandraBeforeSend;
  readonly attachmentSettings: CassandraAttachmentSettings;
  readonly pushSettings: CassandraPushSettings;
  readonly signingKeys: CassandraSigningKeys;

  constructor(client: CassandraClient, keyspace: string, scope = 'control') {
    // Every statement with the store options, reads sent to a second node when the first is slow,
    // and a database that cannot answer as BackendUnavailableError (cql), as the node's stores.
    const db = cql(client);
    this.accounts = new CassandraAccounts(db, keyspace);
    this.sessions = new CassandraSessions(db, keyspace);
    this.applications = new CassandraApplications(db, keyspace);
    this.keys = new CassandraApiKeys(db, keyspace);
    this.clusters = new CassandraClusters(db, keyspace, scope);
    this.mfa = new CassandraMfa(db, keyspace);
    this.usage = new CassandraUsage(db, keyspace);
    this.webhooks = new CassandraWebhooks(db, keyspace);
    this.beforeSend = new CassandraBeforeSend(db, keyspace);
    this.attachmentSettings = new CassandraAttachmentSettings(db, keyspace);
    this.pushSettings = new CassandraPushSettings(db, keyspace);
    this.signingKeys = new CassandraSigningKeys(db, keyspace, 'control', scope);
  }

  async close(): Promise<void> {
    // The client belongs to the caller.
  }
}
