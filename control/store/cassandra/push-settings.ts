import { applied, claimRow, type Cql } from '../../../common/cassandra/index.ts';
import type { PushSettings } from '../../../common/push/index.ts';
import { assemblePushSettings, type StoredPushPart } from '../push-settings-parts.ts';
import type { PushDeliveryRecord, PushPartValues, PushSettingsStore, PushWebPart } from '../types/push-settings.ts';
import { CassandraPushDeliveryLog } from './push-deliveries.ts';

/**
 * Push settings on Cassandra: `push_settings`, a row per application and part, the value as JSON.
 * The `apns`, `fcm` and `options` parts are plain upserts and deletes (the last set wins); the Web
 * Push part is written by compare-and-set only (made once, then its subject changed or the part
 * removed), so two first sets agree on one key pair. The delivery log is CassandraPushDeliveryLog's.
 */
export class CassandraPushSettings implements PushSettingsStore {
  private readonly log: CassandraPushDeliveryLog;

  constructor(
    private readonly db: Cql,
    private readonly ks: string,
  ) {
    this.log = new CassandraPushDeliveryLog(db, ks);
  }

  async get(appId: string): Promise<PushSettings | undefined> {
    const rows = await this.db.execute(`SELECT part, value_json, updated_at FROM ${this.ks}.push_settings WHERE app_id = ?`, [appId]);
    const parts = new Map<string, StoredPushPart>();
    for (const r of rows.rows) parts.set(String(r.get('part')), { value: JSON.parse(String(r.get('value_json'))), updatedAt: String(r.get('updated_at')) });
    return assemblePushSettings(appId, parts);
  }

  async put<P extends keyof PushPartValues>(appId: string, part: P, value: PushPartValues[P] | undefined, updatedAt: string): Promise<void> {
    if (value === undefined) await this.db.execute(`DELETE FROM ${this.ks}.push_settings WHERE app_id = ? AND part = ?`, [appId, part]);
    else await this.db.execute(`INSERT INTO ${this.ks}.push_settings (app_id, part, value_json, updated_at) VALUES (?, ?, ?, ?)`, [appId, part, JSON.stringify(value), updatedAt]);
  }

  async createWebPush(appId: string, value: PushWebPart, updatedAt: string): Promise<'created' | 'exists'> {
    const json = JSON.stringify(value);
    const { won } = await claimRow(this.db, `INSERT INTO ${this.ks}.push_settings (app_id, part, value_json, updated_at) VALUES (?, 'webPush', ?, ?) IF NOT EXISTS`, [appId, json, updatedAt], 'value_json', json);
    return won ? 'created' : 'exists';
  }

  async updateWebPush(appId: string, subject: string | undefined, updatedAt: string): Promise<'updated' | 'not-found'> {
    if (subject === undefined) return applied(await this.db.execute(`DELETE FROM ${this.ks}.push_settings WHERE app_id = ? AND part = 'webPush' IF EXISTS`, [appId])) ? 'updated' : 'not-found';
    const row = (await this.db.execute(`SELECT value_json FROM ${this.ks}.push_settings WHERE app_id = ? AND part = 'webPush'`, [appId])).first();
    if (!row) return 'not-found';
    const json = JSON.stringify({ ...(JSON.parse(String(row.get('value_json'))) as PushWebPart), subject });
    const result = await this.db.execute(`UPDATE ${this.ks}.push_settings SET value_json = ?, updated_at = ? WHERE app_id = ? AND part = 'webPush' IF EXISTS`, [json, updatedAt, appId]);
    return applied(result) ? 'updated' : 'not-found';
  }

  recordDeliveries(records: PushDeliveryRecord[]): Promise<void> {
    return this.log.record(records);
  }

  deliveries(appId: string, provider: PushDeliveryRecord['provider'] | undefined, limit: number): Promise<PushDeliveryRecord[]> {
    return this.log.list(appId, provider, limit);
  }

  async delete(appId: string): Promise<void> {
    await Promise.all([this.db.execute(`DELETE FROM ${this.ks}.push_settings WHERE app_id = ?`, [appId]), this.log.forget(appId)]);
  }
}
