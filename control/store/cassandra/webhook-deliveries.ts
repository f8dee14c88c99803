import type cassandra from 'cassandra-driver';
import { defined, num, opt, str, type Cql } from '../../../common/cassandra/index.ts';
import type { WebhookDelivery } from '../types.ts';
import { absent, minuteOf, newestOfMinutes, WRITE_ROUND } from './minute-log.ts';

type Row = cassandra.types.Row;

function deliveryOf(row: Row): WebhookDelivery {
  return defined<WebhookDelivery>({
    id: str(row, 'id'),
    appId: str(row, 'app_id'),
    endpointId: str(row, 'endpoint_id'),
    eventId: str(row, 'event_id'),
    type: str(row, 'type'),
    attempt: num(row, 'attempt'),
    status: str(row, 'status') as WebhookDelivery['status'],
    statusCode: row.get('status_code') === null ? undefined : num(row, 'status_code'),
    durationMs: num(row, 'duration_ms'),
    error: opt(row, 'error'),
    nextRetryAt: opt(row, 'next_retry_at'),
    at: str(row, 'at'),
    body: str(row, 'body'),
  });
}

/**
 * Endpoints' delivery logs on Cassandra (migration control-006). Every row lives 24 hours
 * (`default_time_to_live`), which is what bounds the log; there is no trim.
 *
 * - `webhook_deliveries`, partition ((app_id, endpoint_id, minute)), clustered (at, id) newest
 *   first: a partition holds one endpoint's attempts of one minute, so its size is that minute's
 *   traffic to that endpoint, never more (at 100 attempts a second of 2 KiB bodies, 12 MiB), and it
 *   is gone a day later.
 * - `webhook_delivery_minutes`, partition ((app_id, endpoint_id)), clustered by minute newest
 *   first: the minutes that hold attempts, at most 1,440 live rows. Its row for a minute is written
 *   with each attempt of that minute, so it outlives every one of them. A listing of `limit` reads
 *   at most `limit` of its rows (each minute listed holds an attempt), then the minutes' partitions
 *   newest first until it has `limit` attempts: usually one or two reads, at most 1 + `limit`.
 * - `webhook_delivery_ids`, partition ((app_id, endpoint_id, id)): an attempt's `at`, which names
 *   its row; finding one by id is two point reads.
 *
 * Deleting an endpoint drops its minutes partition; its attempts' rows are left to expire (a day
 * at most), and the caller lists them only while the endpoint exists (see CassandraWebhooks). The
 * tables compact by time window and keep tombstones an hour (gc_grace_seconds): whatever a replica
 * might bring back after a missed delete expires within the day like everything else here.
 */
export class CassandraDeliveryLog {
  constructor(private readonly db: Cql, private readonly ks: string) {}

  async record(records: WebhookDelivery[]): Promise<void> {
    for (let i = 0; i < records.length; i += WRITE_ROUND) {
      const round = records.slice(i, i + WRITE_ROUND);
      const minutes = new Map(round.map((d) => [`${d.appId} ${d.endpointId} ${minuteOf(d.at)}`, [d.appId, d.endpointId, minuteOf(d.at)]]));
      await Promise.all([
        ...round.map((d) =>
          this.db.execute(
            `INSERT INTO ${this.ks}.webhook_deliveries (app_id, endpoint_id, minute, at, id, event_id, type, attempt, status, status_code, duration_ms, error, next_retry_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
            [d.appId, d.endpointId, minuteOf(d.at), d.at, d.id, d.eventId, d.type, d.attempt, d.status, absent(d.statusCode), d.durationMs, absent(d.error), absent(d.nextRetryAt), d.body],
          ),
        ),
        ...round.map((d) => this.db.execute(`INSERT INTO ${this.ks}.webhook_delivery_ids (app_id, endpoint_id, id, at) VALUES (?, ?, ?, ?)`, [d.appId, d.endpointId, d.id, d.at])),
        ...[...minutes.values()].map((key) => this.db.execute(`INSERT INTO ${this.ks}.webhook_delivery_minutes (app_id, endpoint_id, minute) VALUES (?, ?, ?)`, key)),
      ]);
    }
  }

  async list(appId: string, endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    if (limit <= 0) return [];
    const minutes = (await this.db.execute(`SELECT minute FROM ${this.ks}.webhook_delivery_minutes WHERE app_id = ? AND endpoint_id = ? LIMIT ?`, [appId, endpointId, limit])).rows.map((r) => str(r, 'minute'));
    return newestOfMinutes(minutes, limit, async (minute, want) =>
      (await this.db.execute(`SELECT * FROM ${this.ks}.webhook_deliveries WHERE app_id = ? AND endpoint_id = ? AND minute = ? LIMIT ?`, [appId, endpointId, minute, want])).rows.map(deliveryOf),
    );
  }

  async get(appId: string, endpointId: string, id: string): Promise<WebhookDelivery | undefined> {
    const pointer = (await this.db.execute(`SELECT at FROM ${this.ks}.webhook_delivery_ids WHERE app_id = ? AND endpoint_id = ? AND id = ?`, [appId, endpointId, id])).first();
    if (!pointer) return undefined;
    const at = str(pointer, 'at');
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.webhook_deliveries WHERE app_id = ? AND endpoint_id = ? AND minute = ? AND at = ? AND id = ?`, [appId, endpointId, minuteOf(at), at, id])).first();
    return row ? deliveryOf(row) : undefined;
  }

  /** Stops listing an endpoint's attempts; their rows expire within the day. */
  async forget(appId: string, endpointId: string): Promise<void> {
    await this.db.execute(`DELETE FROM ${this.ks}.webhook_delivery_minutes WHERE app_id = ? AND endpoint_id = ?`, [appId, endpointId]);
  }
}
