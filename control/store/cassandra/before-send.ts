import type { Cql } from '../../../common/cassandra/index.ts';
import type { BeforeSendHook, BeforeSendStore } from '../types.ts';

type Row = { get(name: string): unknown };

function hookOf(row: Row): BeforeSendHook {
  return {
    appId: String(row.get('app_id')),
    url: String(row.get('url')),
    timeoutMs: Number(row.get('timeout_ms')),
    failurePolicy: String(row.get('failure_policy')) as BeforeSendHook['failurePolicy'],
    secret: String(row.get('secret')),
    createdAt: String(row.get('created_at')),
    updatedAt: String(row.get('updated_at')),
  };
}

/**
 * Before-send hooks on Cassandra: one row per application (`before_send_hooks`). Every write is a
 * compare-and-set (IF NOT EXISTS / IF EXISTS), so a create never overwrites a concurrent one and
 * the row's writes are never mixed with plain ones.
 */
export class CassandraBeforeSend implements BeforeSendStore {
  constructor(private readonly db: Cql, private readonly ks: string) {}

  async get(appId: string): Promise<BeforeSendHook | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.before_send_hooks WHERE app_id = ?`, [appId])).first();
    return row ? hookOf(row) : undefined;
  }

  async create(h: BeforeSendHook): Promise<'created' | 'exists'> {
    const result = await this.db.execute(
      `INSERT INTO ${this.ks}.before_send_hooks (app_id, url, timeout_ms, failure_policy, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) IF NOT EXISTS`,
      [h.appId, h.url, h.timeoutMs, h.failurePolicy, h.secret, h.createdAt, h.updatedAt],
    );
    return result.first()?.get('[applied]') === true ? 'created' : 'exists';
  }

  async update(h: BeforeSendHook): Promise<'updated' | 'not-found'> {
    const result = await this.db.execute(
      `UPDATE ${this.ks}.before_send_hooks SET url = ?, timeout_ms = ?, failure_policy = ?, secret = ?, created_at = ?, updated_at = ? WHERE app_id = ? IF EXISTS`,
      [h.url, h.timeoutMs, h.failurePolicy, h.secret, h.createdAt, h.updatedAt, h.appId],
    );
    return result.first()?.get('[applied]') === true ? 'updated' : 'not-found';
  }

  async delete(appId: string): Promise<'deleted' | 'not-found'> {
    const result = await this.db.execute(`DELETE FROM ${this.ks}.before_send_hooks WHERE app_id = ? IF EXISTS`, [appId]);
    return result.first()?.get('[applied]') === true ? 'deleted' : 'not-found';
  }
}
