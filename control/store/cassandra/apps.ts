import type { types } from 'cassandra-driver';
import { applied, str, type Cql } from '../../../common/cassandra/index.ts';
import type { ApiKeyRecord, ApiKeyStore, Application, ApplicationStore, AppStatus, Tier } from '../types.ts';
import { scanRows } from './scan.ts';
import { Slots } from './slots.ts';

/** A stored tier; rows written before tiers existed hold DEMO. */
const tierOf = (row: types.Row, column: string): Tier => (row.get(column) === 'STANDARD' ? 'STANDARD' : 'DEMO');

/** Applications under their owning account; the per-account limit is held as slots. */
export class CassandraApplications implements ApplicationStore {
  private readonly slots: Slots;

  constructor(private readonly db: Cql, private readonly ks: string) {
    this.slots = new Slots(db, `${ks}.application_slots`, 'client_id', 'app_id');
  }

  private read(row: types.Row): Application {
    return {
      id: str(row, 'id'),
      clientId: str(row, 'client_id'),
      name: str(row, 'name'),
      status: str(row, 'status') as AppStatus,
      type: tierOf(row, 'type'),
      tier: tierOf(row, 'tier'),
      clusterId: str(row, 'cluster_id'),
      createdAt: str(row, 'created_at'),
      updatedAt: str(row, 'updated_at'),
    };
  }

  async create(app: Application, limit: number): Promise<'created' | 'limit'> {
    const slot = await this.slots.claim(app.clientId, app.id, limit);
    if (slot === undefined) return 'limit';
    await Promise.all([
      this.db.execute(
        `INSERT INTO ${this.ks}.applications (client_id, id, name, status, type, tier, cluster_id, created_at, updated_at, slot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [app.clientId, app.id, app.name, app.status, app.type, app.tier, app.clusterId, app.createdAt, app.updatedAt, slot],
      ),
      this.db.execute(`INSERT INTO ${this.ks}.applications_by_id (id, client_id) VALUES (?, ?)`, [app.id, app.clientId]),
    ]);
    return 'created';
  }

  async list(clientId: string): Promise<Application[]> {
    const rows = (await this.db.execute(`SELECT * FROM ${this.ks}.applications WHERE client_id = ?`, [clientId])).rows;
    return rows.map((r) => this.read(r)).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async get(clientId: string, appId: string): Promise<Application | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.applications WHERE client_id = ? AND id = ?`, [clientId, appId])).first();
    return row ? this.read(row) : undefined;
  }

  async getById(appId: string): Promise<Application | undefined> {
    const row = (await this.db.execute(`SELECT client_id FROM ${this.ks}.applications_by_id WHERE id = ?`, [appId])).first();
    return row ? this.get(str(row, 'client_id'), appId) : undefined;
  }

  /**
   * A paged scan of the whole table, acceptable for an operator command: each account holds at
   * most 5 applications (LIMITS), so it reads at most 5 rows per account. The cluster is filtered
   * here rather than with ALLOW FILTERING, which would scan all the same.
   */
  async listAll(clusterId?: string): Promise<Application[]> {
    const apps: Application[] = [];
    for await (const row of scanRows(this.db, `SELECT * FROM ${this.ks}.applications`)) {
      const app = this.read(row);
      if (clusterId === undefined || app.clusterId === clusterId) apps.push(app);
    }
    return apps.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async update(app: Application): Promise<'updated' | 'not-found'> {
    const result = await this.db.execute(
      `UPDATE ${this.ks}.applications SET name = ?, status = ?, type = ?, tier = ?, cluster_id = ?, created_at = ?, updated_at = ? WHERE client_id = ? AND id = ? IF EXISTS`,
      [app.name, app.status, app.type, app.tier, app.clusterId, app.createdAt, app.updatedAt, app.clientId, app.id],
    );
    return applied(result) ? 'updated' : 'not-found';
  }

  async delete(clientId: string, appId: string): Promise<'deleted' | 'not-found'> {
    const row = (await this.db.execute(`SELECT slot FROM ${this.ks}.applications WHERE client_id = ? AND id = ?`, [clientId, appId])).first();
    if (!row) return 'not-found';
    const gone = await this.db.execute(`DELETE FROM ${this.ks}.applications WHERE client_id = ? AND id = ? IF EXISTS`, [clientId, appId]);
    if (!applied(gone)) return 'not-found';
    await Promise.all([
      this.db.execute(`DELETE FROM ${this.ks}.applications_by_id WHERE id = ?`, [appId]),
      this.slots.release(clientId, Number(row.get('slot')), appId),
    ]);
    return 'deleted';
  }
}

/** API keys under their application; active keys hold slots, revoked ones give theirs back. */
export class CassandraApiKeys implements ApiKeyStore {
  private readonly slots: Slots;

  constructor(private readonly db: Cql, private readonly ks: string) {
    this.slots = new Slots(db, `${ks}.api_key_slots`, 'app_id', 'key_id');
  }

  private read(row: types.Row): ApiKeyRecord & { slot: number } {
    const key: ApiKeyRecord & { slot: number } = {
      id: str(row, 'id'),
      appId: str(row, 'app_id'),
      tokenHash: str(row, 'token_hash'),
      keyPrefix: str(row, 'key_prefix'),
      ...(row.get('key_suffix') ? { keySuffix: str(row, 'key_suffix') } : {}),
      audience: str(row, 'audience'),
      tier: tierOf(row, 'tier'),
      createdAt: str(row, 'created_at'),
      slot: Number(row.get('slot')),
    };
    const revokedAt = row.get('revoked_at') as string | null;
    if (revokedAt !== null) key.revokedAt = revokedAt;
    return key;
  }

  private public({ slot: _slot, ...key }: ApiKeyRecord & { slot: number }): ApiKeyRecord {
    return key;
  }

  private write(key: ApiKeyRecord, slot: number) {
    return this.db.execute(
      `INSERT INTO ${this.ks}.api_keys (app_id, id, token_hash, key_prefix, key_suffix, audience, tier, created_at, revoked_at, slot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [key.appId, key.id, key.tokenHash, key.keyPrefix, key.keySuffix ?? null, key.audience, key.tier, key.createdAt, key.revokedAt ?? null, slot],
    );
  }

  private async find(appId: string, keyId: string) {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.api_keys WHERE app_id = ? AND id = ?`, [appId, keyId])).first();
    return row ? this.read(row) : undefined;
  }

  async create(key: ApiKeyRecord, limit: number): Promise<'created' | 'limit'> {
    const slot = await this.slots.claim(key.appId, key.id, limit);
    if (slot === undefined) return 'limit';
    await this.write(key, slot);
    return 'created';
  }

  async list(appId: string): Promise<ApiKeyRecord[]> {
    const rows = (await this.db.execute(`SELECT * FROM ${this.ks}.api_keys WHERE app_id = ?`, [appId])).rows;
    return rows.map((r) => this.public(this.read(r))).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async get(appId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
    const key = await this.find(appId, keyId);
    return key && this.public(key);
  }

  /** Revokes once (compare-and-set); true when this call did. */
  private async revokeOnce(key: ApiKeyRecord & { slot: number }, now: string): Promise<boolean> {
    const result = await this.db.execute(`UPDATE ${this.ks}.api_keys SET revoked_at = ? WHERE app_id = ? AND id = ? IF revoked_at = null`, [now, key.appId, key.id]);
    return applied(result);
  }

  async revoke(appId: string, keyId: string, now: string): Promise<'revoked' | 'not-found'> {
    const key = await this.find(appId, keyId);
    if (!key) return 'not-found';
    if (await this.revokeOnce(key, now)) await this.slots.release(appId, key.slot, keyId);
    return 'revoked';
  }

  async revokeAll(appId: string, now: string): Promise<number> {
    const rows = (await this.db.execute(`SELECT * FROM ${this.ks}.api_keys WHERE app_id = ?`, [appId])).rows.map((r) => this.read(r));
    const done = await Promise.all(
      rows.filter((k) => !k.revokedAt).map(async (k) => {
        if (!(await this.revokeOnce(k, now))) return false;
        await this.slots.release(appId, k.slot, k.id);
        return true;
      }),
    );
    return done.filter(Boolean).length;
  }

  async rotate(appId: string, keyId: string, next: ApiKeyRecord, now: string): Promise<'rotated' | 'not-found' | 'revoked'> {
    const key = await this.find(appId, keyId);
    if (!key) return 'not-found';
    if (key.revokedAt || !(await this.revokeOnce(key, now))) return 'revoked';
    // The replacement takes over the old key's slot: the active count never changes.
    await Promise.all([this.write(next, key.slot), this.slots.transfer(appId, key.slot, keyId, next.id)]);
    return 'rotated';
  }

  async isActive(appId: string, keyId: string): Promise<boolean> {
    const key = await this.find(appId, keyId);
    return key !== undefined && !key.revokedAt;
  }
}
