import type { Cql } from '../../../common/cassandra/index.ts';
import type { AttachmentSettingsStore, StoredAttachmentSettings } from '../types.ts';

/**
 * Attachment settings on Cassandra: one row per application (`attachment_settings`), the settings
 * as JSON. Plain upserts and deletes (idempotent, so they may be retried on another coordinator):
 * the last set wins, as the interface says.
 */
export class CassandraAttachmentSettings implements AttachmentSettingsStore {
  constructor(
    private readonly db: Cql,
    private readonly ks: string,
  ) {}

  async get(appId: string): Promise<StoredAttachmentSettings | undefined> {
    const row = (await this.db.execute(`SELECT settings_json, updated_at FROM ${this.ks}.attachment_settings WHERE app_id = ?`, [appId])).first();
    return row ? { appId, settings: JSON.parse(String(row.get('settings_json'))) as StoredAttachmentSettings['settings'], updatedAt: String(row.get('updated_at')) } : undefined;
  }

  async set(r: StoredAttachmentSettings): Promise<void> {
    await this.db.execute(`INSERT INTO ${this.ks}.attachment_settings (app_id, settings_json, updated_at) VALUES (?, ?, ?)`, [r.appId, JSON.stringify(r.settings), r.updatedAt]);
  }

  async delete(appId: string): Promise<void> {
    await this.db.execute(`DELETE FROM ${this.ks}.attachment_settings WHERE app_id = ?`, [appId]);
  }
}
