import { randomUUID } from 'node:crypto';
import { CassandraSigningKeys, claimRow, cql, type CassandraClient } from '../../../common/cassandra/index.ts';
import type { Cluster, ClusterStatus, ClusterStore, ControlStore } from '../types.ts';
import { CassandraAccounts, CassandraSessions } from './accounts.ts';
import { CassandraApiKeys, CassandraApplications } from './apps.ts';
import { CassandraMfa } from './mfa.ts';
export { controlMigrations } from './schema.ts';

/** The cluster registry: a name is claimed once (compare-and-set) and keeps its id for ever. */
class CassandraClusters implements ClusterStore {
  constructor(private readonly db: CassandraClient, private readonly ks: string, private readonly scope: string) {}

  async upsert(name: string, endpoint: string, now: string): Promise<Cluster> {
    const id = randomUUID();
    const claim = await claimRow(this.db, `INSERT INTO ${this.ks}.clusters (scope, name, id, endpoint, status, created_at) VALUES (?, ?, ?, ?, 'ACTIVE', ?) IF NOT EXISTS`, [this.scope, name, id, endpoint, now], 'id', id);
    if (claim.won) {
      await this.db.execute(`INSERT INTO ${this.ks}.clusters_by_id (scope, id, name) VALUES (?, ?, ?)`, [this.scope, id, name]);
      return { id, name, endpoint, status: 'ACTIVE', createdAt: now };
    }
    await this.db.execute(`UPDATE ${this.ks}.clusters SET endpoint = ? WHERE scope = ? AND name = ?`, [endpoint, this.scope, name]);
    const existing = claim.row!;
    return { id: String(existing.get('id')), name, endpoint, status: String(existing.get('status')) as ClusterStatus, createdAt: String(existing.get('created_at')) };
  }

  async get(id: string): Promise<Cluster | undefined> {
    const named = (await this.db.execute(`SELECT name FROM ${this.ks}.clusters_by_id WHERE scope = ? AND id = ?`, [this.scope, id])).first();
    if (!named) return undefined;
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.clusters WHERE scope = ? AND name = ?`, [this.scope, String(named.get('name'))])).first();
    return row ? { id, name: String(row.get('name')), endpoint: String(row.get('endpoint')), status: String(row.get('status')) as ClusterStatus, createdAt: String(row.get('created_at')) } : undefined;
  }
}

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
  readonly signingKeys: CassandraSigningKeys;

  constructor(db: CassandraClient, keyspace: string, scope = 'control') {
    this.accounts = new CassandraAccounts(db, keyspace);
    this.sessions = new CassandraSessions(db, keyspace);
    this.applications = new CassandraApplications(db, keyspace);
    this.keys = new CassandraApiKeys(db, keyspace);
    this.clusters = new CassandraClusters(db, keyspace, scope);
    this.mfa = new CassandraMfa(db, keyspace);
    this.signingKeys = new CassandraSigningKeys(cql(db), keyspace, 'control', scope);
  }

  async close(): Promise<void> {
    // The client belongs to the caller.
  }
}
