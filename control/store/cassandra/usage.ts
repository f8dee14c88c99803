import type { Cql } from '../../../common/cassandra/index.ts';
import type { UsageDelta, UsageSnapshot, UsageStore } from '../types.ts';

const TOTALS = ['users', 'chats', 'messages', 'fileBytes'] as const;
/** Microseconds since the epoch (exact in a double until the year 2255): the write time that makes the newest sample or use win. */
const micros = (iso: string) => Date.parse(iso) * 1000;

/**
 * Usage on Cassandra. Sums are counter columns (`usage_totals`, `usage_daily`), so nodes add
 * without reading; a node's daily peak is its own row in `usage_peaks` (read as the max); the
 * newest concurrent-user sample (`usage_current`) and each key's last use (`usage_key_use`) are
 * written with the sample's or use's own time as the write time, so the newest wins whatever
 * order the nodes' flushes land in.
 */
export class CassandraUsage implements UsageStore {
  constructor(private readonly db: Cql, private readonly ks: string) {}

  async record(nodeId: string, deltas: UsageDelta[]): Promise<void> {
    await Promise.all(deltas.map((d) => this.add(nodeId, d)));
  }

  private async add(nodeId: string, d: UsageDelta): Promise<void> {
    const writes: Promise<unknown>[] = [];
    let messages = 0;
    for (const [day, n] of Object.entries(d.messages)) {
      messages += n;
      writes.push(this.db.execute(`UPDATE ${this.ks}.usage_daily SET messages = messages + ? WHERE app_id = ? AND day = ?`, [n, d.appId, day]));
    }
    const totals = { users: d.users, chats: d.chats, messages, fileBytes: d.fileBytes ?? 0 };
    for (const metric of TOTALS) {
      if (totals[metric]) writes.push(this.db.execute(`UPDATE ${this.ks}.usage_totals SET value = value + ? WHERE app_id = ? AND metric = ?`, [totals[metric], d.appId, metric]));
    }
    if (d.concurrent) {
      for (const [day, peak] of Object.entries(d.concurrent.peaks)) {
        // A node's peak for the day only grows within a process; a restarted node may write a
        // lower one, hence the per-node row read as the max rather than one overwritten value.
        writes.push(this.db.execute(`UPDATE ${this.ks}.usage_peaks USING TTL 3456000 SET peak = ? WHERE app_id = ? AND day = ? AND node_id = ?`, [peak, d.appId, day, nodeId]));
      }
      writes.push(this.db.execute(`UPDATE ${this.ks}.usage_current USING TIMESTAMP ? SET users = ?, at = ? WHERE app_id = ?`, [micros(d.concurrent.at), d.concurrent.current, d.concurrent.at, d.appId]));
    }
    for (const [keyId, at] of Object.entries(d.keysUsed)) {
      writes.push(this.db.execute(`UPDATE ${this.ks}.usage_key_use USING TIMESTAMP ? SET at = ? WHERE app_id = ? AND key_id = ?`, [micros(at), at, d.appId, keyId]));
    }
    await Promise.all(writes);
  }

  async read(appId: string, days: string[]): Promise<UsageSnapshot> {
    const none = { rows: [] };
    const [totals, daily, peaks, current] = await Promise.all([
      this.db.execute(`SELECT metric, value FROM ${this.ks}.usage_totals WHERE app_id = ?`, [appId]),
      days.length ? this.db.execute(`SELECT day, messages FROM ${this.ks}.usage_daily WHERE app_id = ? AND day IN ?`, [appId, days]) : none,
      days.length ? this.db.execute(`SELECT day, peak FROM ${this.ks}.usage_peaks WHERE app_id = ? AND day IN ?`, [appId, days]) : none,
      this.db.execute(`SELECT users, at FROM ${this.ks}.usage_current WHERE app_id = ?`, [appId]),
    ]);
    const snapshot: UsageSnapshot = { users: 0, chats: 0, messages: 0, fileBytes: 0, messagesByDay: {}, peakByDay: {} };
    for (const row of totals.rows) {
      const metric = String(row.get('metric')) as (typeof TOTALS)[number];
      if (TOTALS.includes(metric)) snapshot[metric] = Number(row.get('value'));
    }
    for (const row of daily.rows) snapshot.messagesByDay[String(row.get('day'))] = Number(row.get('messages'));
    for (const row of peaks.rows) {
      const day = String(row.get('day'));
      snapshot.peakByDay[day] = Math.max(snapshot.peakByDay[day] ?? 0, Number(row.get('peak')));
    }
    const latest = current.rows[0];
    if (latest?.get('at')) snapshot.current = { users: Number(latest.get('users')), at: String(latest.get('at')) };
    return snapshot;
  }

  async keysLastUsed(appId: string): Promise<Record<string, string>> {
    const rows = await this.db.execute(`SELECT key_id, at FROM ${this.ks}.usage_key_use WHERE app_id = ?`, [appId]);
    return Object.fromEntries(rows.rows.map((row) => [String(row.get('key_id')), String(row.get('at'))]));
  }

  async forget(appId: string): Promise<void> {
    // Rows written with a use's own time (a node's clock may run ahead) are shadowed for good by a
    // tombstone from the far future: application ids are never reused. Counters take no timestamp.
    await Promise.all([
      ...['usage_totals', 'usage_daily'].map((table) => this.db.execute(`DELETE FROM ${this.ks}.${table} WHERE app_id = ?`, [appId])),
      ...['usage_peaks', 'usage_current', 'usage_key_use'].map((table) => this.db.execute(`DELETE FROM ${this.ks}.${table} USING TIMESTAMP ? WHERE app_id = ?`, [Number.MAX_SAFE_INTEGER, appId])),
    ]);
  }
}
