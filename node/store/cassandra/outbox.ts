import { eventTime } from '../../../common/webhooks/ids.ts';
import type { types } from 'cassandra-driver';
import { num, opt, str, type BatchStatement, type Cql } from '../../../common/cassandra/index.ts';
import { coveredByMark } from '../outbox-mark.ts';
import type { ChangeCheck, OutboxEvent, PendingEvent, WebhookOutbox } from '../types.ts';

/** An outbox partition holds one owner's events of ten minutes. */
const SLOT_MS = 10 * 60_000;
/** Events are given up 24 h after they were made (README, "Webhooks"); rows live an hour longer. */
const KEEP_MS = 25 * 3600_000;
const slotOf = (id: string) => Math.floor(eventTime(id) / SLOT_MS);
/** A message check in its own columns (as node-008 wrote them), any other as JSON (node-009). */
function checkColumns(check: ChangeCheck | undefined): [string | null, string | null, number | null, string | null] {
  if (check === undefined) return [null, null, null, null];
  if (check.kind === undefined) return [check.chatId, check.messageId, check.rev, null];
  return [null, null, null, JSON.stringify(check)];
}

/**
 * The outbox on Cassandra (migration node-008). `webhook_outbox` is partitioned by (owner, ten
 * minutes) and clustered by event id: an owner appends to one partition at a time, a partition is
 * bounded by the owner's write rate over ten minutes, and rows expire after 25 hours (events are
 * given up after 24). Finishing an event does not delete it (a queue of tombstones is what makes
 * Cassandra queues slow): the owner's row in `webhook_outbox_owners` keeps a low-water mark below
 * which every event is finished, and only events finished out of order above it are marked.
 *
 * Atomicity with the change an event reports: the events are written first, and a recovery checks
 * the change landed (OutboxEvent.check). For messages (MessageStore.put) that check is exact: a
 * message stays stored at its revision or a later one. A logged batch would give the same guarantee
 * at the price of a batch-log write and replay on every group commit. For chats, members and users
 * (EventOptions) the change is a compare-and-set, which cannot share a batch with another
 * partition, and a later change can undo what a check looks for (a member added, then removed), so
 * their events are also confirmed (`confirm`: the check is cleared) once the change applied and
 * before it is acknowledged: an acknowledged change's event is sent whatever followed it, and the
 * check decides only for a change cut short by a crash.
 */
export class CassandraOutbox implements WebhookOutbox {
  private readonly registered = new Set<string>();

  constructor(
    private readonly db: Cql,
    private readonly ks: string,
  ) {}

  async append(owner: string, events: OutboxEvent[]): Promise<void> {
    if (events.length === 0) return;
    const bySlot = new Map<number, BatchStatement[]>();
    for (const e of events) {
      const statement: BatchStatement = {
        query: `INSERT INTO ${this.ks}.webhook_outbox (owner, slot, id, app_id, type, body, check_chat, check_message, check_rev, check_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        params: [owner, slotOf(e.id), e.id, e.appId, e.type, e.body, ...checkColumns(e.check)],
      };
      const list = bySlot.get(slotOf(e.id));
      if (list) list.push(statement);
      else bySlot.set(slotOf(e.id), [statement]);
    }
    const writes = [...bySlot.values()].map((b) => this.db.batch(b));
    if (!this.registered.has(owner)) {
      writes.push(this.db.execute(`UPDATE ${this.ks}.webhook_outbox_owners SET seen = toTimestamp(now()) WHERE shard = 0 AND owner = ?`, [owner]));
    }
    await Promise.all(writes);
    this.registered.add(owner);
  }

  async confirm(owner: string, ids: string[]): Promise<void> {
    const bySlot = new Map<number, BatchStatement[]>();
    for (const id of ids) {
      // Both check forms cleared; an UPDATE of a row already expired or finished leaves only cells no read takes as an event.
      const statement: BatchStatement = { query: `UPDATE ${this.ks}.webhook_outbox SET check_state = null, check_chat = null WHERE owner = ? AND slot = ? AND id = ?`, params: [owner, slotOf(id), id] };
      const list = bySlot.get(slotOf(id));
      if (list) list.push(statement);
      else bySlot.set(slotOf(id), [statement]);
    }
    await Promise.all([...bySlot.values()].map((b) => this.db.batch(b)));
  }

  private async low(owner: string): Promise<string | undefined> {
    const row = (await this.db.execute(`SELECT low FROM ${this.ks}.webhook_outbox_owners WHERE shard = 0 AND owner = ?`, [owner])).first();
    return row ? opt(row, 'low') : undefined;
  }

  async pending(owner: string, start: string | undefined, limit: number): Promise<PendingEvent[]> {
    const low = await this.low(owner);
    const from = start === undefined || (low !== undefined && low > start) ? low : start;
    const now = Date.now();
    const firstSlot = from === undefined ? Math.floor((now - KEEP_MS) / SLOT_MS) : Math.max(slotOf(from), Math.floor((now - KEEP_MS) / SLOT_MS));
    const out: PendingEvent[] = [];
    for (let slot = firstSlot; slot <= Math.floor(now / SLOT_MS) + 1 && out.length < limit; slot++) {
      // Page through the slot: rows marked finished are skipped, so a page may yield nothing.
      let after: string | undefined = from !== undefined && slot === slotOf(from) ? from : undefined;
      let inclusive = true;
      for (;;) {
        const page = limit - out.length + 64;
        const rows = after === undefined
          ? await this.db.execute(`SELECT * FROM ${this.ks}.webhook_outbox WHERE owner = ? AND slot = ? LIMIT ?`, [owner, slot, page])
          : await this.db.execute(`SELECT * FROM ${this.ks}.webhook_outbox WHERE owner = ? AND slot = ? AND id ${inclusive ? '>=' : '>'} ? LIMIT ?`, [owner, slot, after, page]);
        this.take(rows.rows, out, limit);
        if (rows.rows.length < page || out.length >= limit) break;
        after = str(rows.rows.at(-1)!, 'id');
        inclusive = false;
      }
    }
    return out;
  }

  /** Adds the unfinished events of `rows` to `out`, up to `limit`. */
  private take(rows: types.Row[], out: PendingEvent[], limit: number): void {
    for (const r of rows) {
      // A mark that outlived its row (written as the row expired) is no event.
      if (r.get('finished') === true || r.get('body') === null) continue;
      const chatId = opt(r, 'check_chat');
      const state = opt(r, 'check_state');
      const event: OutboxEvent = { id: str(r, 'id'), appId: str(r, 'app_id'), type: str(r, 'type'), body: str(r, 'body') };
      if (state !== undefined) event.check = JSON.parse(state) as ChangeCheck;
      else if (chatId !== undefined) event.check = { chatId, messageId: str(r, 'check_message'), rev: num(r, 'check_rev') };
      out.push({ event, done: (r.get('done') as string[] | null) ?? [] });
      if (out.length >= limit) return;
    }
  }

  /**
   * Only what the mark does not cover is written, and only when it is well above the mark: an
   * event finished within MARK_SLACK_MS of the mark is covered by the mark soon (in the steady
   * state every event is), so writing it would cost a statement per event. A crash can resend
   * those (at least once); an event finished far above a mark held back by a failing endpoint is
   * marked, so a recovery does not resend hours of delivered events.
   */
  async progress(owner: string, finished: string[], partial: PendingEvent[], low?: string): Promise<void> {
    const writes: Promise<unknown>[] = [];
    const marks: BatchStatement[] = [];
    const covered = coveredByMark(low);
    for (const id of finished) {
      if (covered(id)) continue;
      marks.push({ query: `UPDATE ${this.ks}.webhook_outbox SET finished = true WHERE owner = ? AND slot = ? AND id = ?`, params: [owner, slotOf(id), id] });
    }
    for (const p of partial) {
      if (covered(p.event.id)) continue;
      marks.push({ query: `UPDATE ${this.ks}.webhook_outbox SET done = ? WHERE owner = ? AND slot = ? AND id = ?`, params: [p.done, owner, slotOf(p.event.id), p.event.id] });
    }
    for (let i = 0; i < marks.length; i += 32) writes.push(this.db.batch(marks.slice(i, i + 32)));
    if (low !== undefined) writes.push(this.db.execute(`UPDATE ${this.ks}.webhook_outbox_owners SET low = ? WHERE shard = 0 AND owner = ?`, [low, owner]));
    await Promise.all(writes);
  }

  async owners(): Promise<string[]> {
    const rows = await this.db.execute(`SELECT owner FROM ${this.ks}.webhook_outbox_owners WHERE shard = 0`);
    return rows.rows.map((r) => str(r, 'owner'));
  }

  async retire(owner: string): Promise<void> {
    this.registered.delete(owner);
    await this.db.execute(`DELETE FROM ${this.ks}.webhook_outbox_owners WHERE shard = 0 AND owner = ?`, [owner]);
  }
}

/**
 * The events of a chat, member or user change (EventOptions): appended with their check before the
 * change, confirmed once it applied, before the change's call resolves (see CassandraOutbox).
 */
export class ChangeEvents {
  constructor(
    private readonly outbox: CassandraOutbox,
    private readonly owner: () => string,
  ) {}

  async around<T>(events: OutboxEvent[] | undefined, change: () => Promise<T>, applied: (result: T) => boolean): Promise<T> {
    if (!events?.length) return change();
    await this.outbox.append(this.owner(), events);
    const result = await change();
    const ids = events.map((e) => e.id);
    // Not applied: finished here, so no recovery weighs their checks (a delete of what is not
    // there would pass its own). Only a crash before this write leaves that to the check.
    if (applied(result)) await this.outbox.confirm(this.owner(), ids);
    else await this.outbox.progress(this.owner(), ids, []);
    return result;
  }
}
