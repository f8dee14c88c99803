import type cassandra from 'cassandra-driver';
import { defined, num, opt, str, type Cql } from '../../../common/cassandra/index.ts';
import { PUSH_DELIVERIES_KEPT, type PushDeliveryRecord } from '../../../common/push/index.ts';
import { absent, minuteOf, newestOfMinutes, WRITE_ROUND } from './minute-log.ts';

type Provider = PushDeliveryRecord['provider'];
/** The streams an attempt is written to: every attempt of the application, and its provider's. */
const ALL = 'all';
const STREAMS = [ALL, 'webPush', 'apns', 'fcm'] as const satisfies readonly (Provider | typeof ALL)[];

function recordOf(row: cassandra.types.Row): PushDeliveryRecord {
  return defined<PushDeliveryRecord>({
    id: str(row, 'id'),
    appId: str(row, 'app_id'),
    provider: str(row, 'provider') as Provider,
    eventId: str(row, 'event_id'),
    messageId: str(row, 'message_id'),
    userId: str(row, 'user_id'),
    deviceId: str(row, 'device_id'),
    attempt: num(row, 'attempt'),
    result: str(row, 'result') as PushDeliveryRecord['result'],
    statusCode: row.get('status_code') === null ? undefined : num(row, 'status_code'),
    reason: opt(row, 'reason'),
    durationMs: num(row, 'duration_ms'),
    nextRetryAt: opt(row, 'next_retry_at'),
    at: str(row, 'at'),
  });
}

/**
 * Applications' push delivery logs on Cassandra (migration control-011). Every row lives 7 days
 * (PUSH_DELIVERY_TTL_SECONDS), which with the read limit is what bounds the log; there is no trim.
 *
 * - `push_deliveries`, partition ((app_id, stream, minute)), clustered (at, id) newest first. Each
 *   attempt is written twice, to stream `all` and to its provider's stream, so a listing filtered
 *   by provider reads only that provider's rows. A partition holds one stream's attempts of one
 *   minute: its size is that minute's pushes of the application (at 1,000 a second, 60,000 rows of
 *   some 300 bytes), never more. The same attempt written again is the same row (an upsert).
 * - `push_delivery_minutes`, partition ((app_id, stream)), clustered by minute newest first: the
 *   minutes that hold attempts, at most 10,080 live rows (a week of minutes), written with each
 *   attempt so it outlives them all. A listing of `limit` (never more than PUSH_DELIVERIES_KEPT)
 *   reads at most `limit` of its rows, then the minutes' partitions newest first until it has
 *   `limit`: usually one or two reads, at most 1 + `limit`.
 *
 * So a listing shows a stream's newest attempts of the last 7 days, at most PUSH_DELIVERIES_KEPT;
 * older rows are there until they expire but never listed. Deleting an application drops its
 * minutes partitions (nothing is listed after); its attempts' rows are left to expire within the
 * week (application ids are never used again).
 */
export class CassandraPushDeliveryLog {
  constructor(
    private readonly db: Cql,
    private readonly ks: string,
  ) {}

  async record(records: PushDeliveryRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += WRITE_ROUND) {
      const round = records.slice(i, i + WRITE_ROUND).flatMap((d) => [ALL, d.provider].map((stream) => ({ stream, d })));
      const minutes = new Map(round.map(({ stream, d }) => [`${d.appId} ${stream} ${minuteOf(d.at)}`, [d.appId, stream, minuteOf(d.at)]]));
      await Promise.all([
        ...round.map(({ stream, d }) =>
          this.db.execute(
            `INSERT INTO ${this.ks}.push_deliveries (app_id, stream, minute, at, id, provider, event_id, message_id, user_id, device_id, attempt, result, status_code, reason, duration_ms, next_retry_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
            [d.appId, stream, minuteOf(d.at), d.at, d.id, d.provider, d.eventId, d.messageId, d.userId, d.deviceId, d.attempt, d.result, absent(d.statusCode), absent(d.reason), d.durationMs, absent(d.nextRetryAt)],
          ),
        ),
        ...[...minutes.values()].map((key) => this.db.execute(`INSERT INTO ${this.ks}.push_delivery_minutes (app_id, stream, minute) VALUES (?, ?, ?)`, key)),
      ]);
    }
  }

  async list(appId: string, provider: Provider | undefined, limit: number): Promise<PushDeliveryRecord[]> {
    const want = Math.min(limit, PUSH_DELIVERIES_KEPT);
    if (want <= 0) return [];
    const stream = provider ?? ALL;
    const minutes = (await this.db.execute(`SELECT minute FROM ${this.ks}.push_delivery_minutes WHERE app_id = ? AND stream = ? LIMIT ?`, [appId, stream, want])).rows.map((r) => str(r, 'minute'));
    return newestOfMinutes(minutes, want, async (minute, n) =>
      (await this.db.execute(`SELECT * FROM ${this.ks}.push_deliveries WHERE app_id = ? AND stream = ? AND minute = ? LIMIT ?`, [appId, stream, minute, n])).rows.map(recordOf),
    );
  }

  /** Stops listing the application's attempts; their rows expire within the week. */
  async forget(appId: string): Promise<void> {
    await Promise.all(STREAMS.map((stream) => this.db.execute(`DELETE FROM ${this.ks}.push_delivery_minutes WHERE app_id = ? AND stream = ?`, [appId, stream])));
  }
}
