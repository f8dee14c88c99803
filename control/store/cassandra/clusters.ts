import { randomUUID } from 'node:crypto';
import type { types } from 'cassandra-driver';
import { claimRow, str, type Cql } from '../../../common/cassandra/index.ts';
import type { Cluster, ClusterStatus, ClusterStore } from '../types.ts';
import { scanRows } from './scan.ts';

const statusOf = (row: types.Row): ClusterStatus => {
  const status = row.get('status');
  return status === 'DRAINING' || status === 'OFFLINE' ? status : 'ACTIVE';
};

const read = (row: types.Row): Cluster => ({
  id: str(row, 'id'),
  name: str(row, 'name'),
  endpoint: str(row, 'endpoint'),
  status: statusOf(row),
  createdAt: str(row, 'created_at'),
});

/**
 * The cluster registry, under `scope`: a name is claimed once (compare-and-set) and keeps its id
 * for ever; endpoint and status are plain writes (the last one wins).
 */
export class CassandraClusters implements ClusterStore {
  constructor(private readonly db: Cql, private readonly ks: string, private readonly scope: string) {}

  async upsert(name: string, endpoint: string, now: string, status?: ClusterStatus): Promise<Cluster> {
    const id = randomUUID();
    const claim = await claimRow(
      this.db,
      `INSERT INTO ${this.ks}.clusters (scope, name, id, endpoint, status, created_at) VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS`,
      [this.scope, name, id, endpoint, status ?? 'ACTIVE', now],
      'id',
      id,
    );
    if (claim.won) {
      await this.db.execute(`INSERT INTO ${this.ks}.clusters_by_id (scope, id, name) VALUES (?, ?, ?)`, [this.scope, id, name]);
      return { id, name, endpoint, status: status ?? 'ACTIVE', createdAt: now };
    }
    const existing = read(claim.row!);
    await Promise.all([
      status === undefined
        ? this.db.execute(`UPDATE ${this.ks}.clusters SET endpoint = ? WHERE scope = ? AND name = ?`, [endpoint, this.scope, name])
        : this.db.execute(`UPDATE ${this.ks}.clusters SET endpoint = ?, status = ? WHERE scope = ? AND name = ?`, [endpoint, status, this.scope, name]),
      // Idempotent: completes a registration whose claim won but whose lookup row was never written.
      this.db.execute(`INSERT INTO ${this.ks}.clusters_by_id (scope, id, name) VALUES (?, ?, ?)`, [this.scope, existing.id, name]),
    ]);
    return { ...existing, endpoint, status: status ?? existing.status };
  }

  async get(id: string): Promise<Cluster | undefined> {
    const named = (await this.db.execute(`SELECT name FROM ${this.ks}.clusters_by_id WHERE scope = ? AND id = ?`, [this.scope, id])).first();
    if (!named) return undefined;
    const cluster = await this.getByName(str(named, 'name'));
    return cluster?.id === id ? cluster : undefined;
  }

  async getByName(name: string): Promise<Cluster | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.clusters WHERE scope = ? AND name = ?`, [this.scope, name])).first();
    return row ? read(row) : undefined;
  }

  /**
   * The partition key is (scope, name), so a scope's clusters cannot be read by partition: this
   * scans the table (paged) and keeps the scope's rows. The registry holds the clusters operators
   * registered, a handful per deployment, so the scan stays small.
   */
  async list(): Promise<Cluster[]> {
    const clusters: Cluster[] = [];
    for await (const row of scanRows(this.db, `SELECT * FROM ${this.ks}.clusters`)) {
      if (row.get('scope') === this.scope) clusters.push(read(row));
    }
    return clusters.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
