import type { Cql } from '../../../common/cassandra/index.ts';
import type { WebhookDelivery, WebhookEndpoint, WebhookStore } from '../types.ts';
import { Slots } from './slots.ts';
import { CassandraDeliveryLog } from './webhook-deliveries.ts';

type Row = { get(name: string): unknown };

function endpointOf(row: Row): WebhookEndpoint {
  const e: WebhookEndpoint = {
    id: String(row.get('id')),
    appId: String(row.get('app_id')),
    url: String(row.get('url')),
    events: (row.get('events') as string[] | null) ?? [],
    status: String(row.get('status')) as WebhookEndpoint['status'],
    secret: String(row.get('secret')),
    createdAt: String(row.get('created_at')),
    updatedAt: String(row.get('updated_at')),
  };
  if (row.get('description')) e.description = String(row.get('description'));
  if (row.get('disabled_reason')) e.disabledReason = String(row.get('disabled_reason'));
  return e;
}

/**
 * Webhook endpoints on Cassandra: one partition per application (`webhook_endpoints`); the limit
 * per application is held as numbered slots claimed by compare-and-set (`webhook_slots`), as for
 * API keys, so concurrent creates never pass it. The delivery log is CassandraDeliveryLog; its
 * attempts are listed only while their endpoint exists (endpoint ids are never reused), so a
 * deleted endpoint's attempts, and any a dispatcher records after the delete, are never shown.
 */
export class CassandraWebhooks implements WebhookStore {
  private readonly slots: Slots;
  private readonly log: CassandraDeliveryLog;

  constructor(private readonly db: Cql, private readonly ks: string) {
    this.slots = new Slots(db, `${ks}.webhook_slots`, 'app_id', 'endpoint_id');
    this.log = new CassandraDeliveryLog(db, ks);
  }

  async create(endpoint: WebhookEndpoint, limit: number): Promise<'created' | 'limit'> {
    const slot = await this.slots.claim(endpoint.appId, endpoint.id, limit);
    if (slot === undefined) return 'limit';
    await this.write(endpoint, slot);
    return 'created';
  }

  private async write(e: WebhookEndpoint, slot: number): Promise<void> {
    await this.db.execute(
      `INSERT INTO ${this.ks}.webhook_endpoints (app_id, id, url, events, description, status, disabled_reason, secret, created_at, updated_at, slot) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [e.appId, e.id, e.url, e.events, e.description ?? null, e.status, e.disabledReason ?? null, e.secret, e.createdAt, e.updatedAt, slot],
    );
  }

  async list(appId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.db.execute(`SELECT * FROM ${this.ks}.webhook_endpoints WHERE app_id = ?`, [appId]);
    return rows.rows.map(endpointOf).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async get(appId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.webhook_endpoints WHERE app_id = ? AND id = ?`, [appId, id])).first();
    return row ? endpointOf(row) : undefined;
  }

  async update(e: WebhookEndpoint): Promise<'updated' | 'not-found'> {
    const result = await this.db.execute(
      `UPDATE ${this.ks}.webhook_endpoints SET url = ?, events = ?, description = ?, status = ?, disabled_reason = ?, secret = ?, updated_at = ? WHERE app_id = ? AND id = ? IF EXISTS`,
      [e.url, e.events, e.description ?? null, e.status, e.disabledReason ?? null, e.secret, e.updatedAt, e.appId, e.id],
    );
    return result.first()?.get('[applied]') === true ? 'updated' : 'not-found';
  }

  async delete(appId: string, id: string): Promise<'deleted' | 'not-found'> {
    const row = (await this.db.execute(`SELECT slot FROM ${this.ks}.webhook_endpoints WHERE app_id = ? AND id = ?`, [appId, id])).first();
    if (!row) return 'not-found';
    const result = await this.db.execute(`DELETE FROM ${this.ks}.webhook_endpoints WHERE app_id = ? AND id = ? IF EXISTS`, [appId, id]);
    if (result.first()?.get('[applied]') !== true) return 'not-found';
    // The slot goes after the row: a failure in between leaves a slot held by nothing (one fewer
    // endpoint allowed), never more endpoints than the limit.
    await Promise.all([this.slots.release(appId, Number(row.get('slot')), id), this.log.forget(appId, id)]);
    return 'deleted';
  }

  private async exists(appId: string, id: string): Promise<boolean> {
    return Boolean((await this.db.execute(`SELECT id FROM ${this.ks}.webhook_endpoints WHERE app_id = ? AND id = ?`, [appId, id])).first());
  }

  async recordDeliveries(records: WebhookDelivery[]): Promise<void> {
    await this.log.record(records);
  }

  async deliveries(appId: string, endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    const [exists, list] = await Promise.all([this.exists(appId, endpointId), this.log.list(appId, endpointId, limit)]);
    return exists ? list : [];
  }

  async delivery(appId: string, endpointId: string, id: string): Promise<WebhookDelivery | undefined> {
    const [exists, found] = await Promise.all([this.exists(appId, endpointId), this.log.get(appId, endpointId, id)]);
    return exists ? found : undefined;
  }
}
