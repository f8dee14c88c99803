import type { CassandraClient } from '../../../common/cassandra/index.ts';
import type { WebhookEndpoint, WebhookStore } from '../types.ts';
import { Slots } from './slots.ts';

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
 * API keys, so concurrent creates never pass it.
 */
export class CassandraWebhooks implements WebhookStore {
  private readonly slots: Slots;

  constructor(private readonly db: CassandraClient, private readonly ks: string) {
    this.slots = new Slots(db, `${ks}.webhook_slots`, 'app_id', 'endpoint_id');
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
    await this.slots.release(appId, Number(row.get('slot')), id);
    return 'deleted';
  }
}
