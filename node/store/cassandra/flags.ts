import type { types } from 'cassandra-driver';
import { applied, str, type Cql } from '../../../common/cassandra/index.ts';
import type { FlagStore, MessageFlag } from '../types.ts';
import { uuidv7Time as idTime } from '../buckets.ts';
import { ACTION_MONTHS as QUEUE_MONTHS, monthOf, monthsBack } from './moderation.ts';

/** Open flags expire from the queue after 90 days (the table's TTL), as moderation actions do. */
const QUEUE_KEPT_MS = 90 * 24 * 3600_000;

/**
 * Flags on Cassandra (migration node-013). `message_flags`: a partition per message, a row per
 * flagging user (so bounded by the chat's members), claimed by `IF NOT EXISTS`: once per user per
 * message. `open_flags`: the review queue, a partition per application and month, newest first,
 * kept 90 days. A flag's queue row is written first and dropped again when its claim finds an
 * earlier flag; a review drops the queue rows of every open flag of the message, then marks them
 * closed, so a crash between leaves flags closed in the queue's eyes only (never listed twice).
 */
export class CassandraFlags implements FlagStore {
  constructor(
    private readonly db: Cql,
    private readonly ks: string,
  ) {}

  private read(row: types.Row, appId: string): MessageFlag {
    return { appId, id: str(row, 'id'), chatId: str(row, 'chat_id'), messageId: str(row, 'message_id'), senderId: str(row, 'sender_id'), flaggedBy: str(row, 'flagged_by'), reason: str(row, 'reason'), createdAt: str(row, 'created_at') };
  }

  async flag(f: MessageFlag): Promise<{ result: 'flagged' | 'exists'; open: number }> {
    const month = monthOf(idTime(f.id));
    await this.db.execute(
      `INSERT INTO ${this.ks}.open_flags (app_id, month, id, chat_id, message_id, sender_id, flagged_by, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [f.appId, month, f.id, f.chatId, f.messageId, f.senderId, f.flaggedBy, f.reason, f.createdAt],
    );
    const claim = await this.db.execute(`INSERT INTO ${this.ks}.message_flags (app_id, chat_id, message_id, flagged_by, id, open) VALUES (?, ?, ?, ?, ?, true) IF NOT EXISTS`, [f.appId, f.chatId, f.messageId, f.flaggedBy, f.id]);
    if (!applied(claim)) await this.db.execute(`DELETE FROM ${this.ks}.open_flags WHERE app_id = ? AND month = ? AND id = ?`, [f.appId, month, f.id]);
    return { result: applied(claim) ? 'flagged' : 'exists', open: (await this.openIds(f.appId, f.chatId, f.messageId)).length };
  }

  private async openIds(appId: string, chatId: string, messageId: string): Promise<{ user: string; id: string }[]> {
    const rows = (await this.db.execute(`SELECT flagged_by, id, open FROM ${this.ks}.message_flags WHERE app_id = ? AND chat_id = ? AND message_id = ?`, [appId, chatId, messageId])).rows;
    return rows.filter((r) => r.get('open') === true).map((r) => ({ user: str(r, 'flagged_by'), id: str(r, 'id') }));
  }

  async open(appId: string, beforeId: string | undefined, limit: number): Promise<MessageFlag[]> {
    const out: MessageFlag[] = [];
    const from = beforeId === undefined ? Date.now() : idTime(beforeId);
    for (let back = 0; back < QUEUE_MONTHS && out.length < limit; back++) {
      const month = monthsBack(from, back);
      const rows = beforeId !== undefined && back === 0
        ? await this.db.execute(`SELECT * FROM ${this.ks}.open_flags WHERE app_id = ? AND month = ? AND id < ? LIMIT ?`, [appId, month, beforeId, limit - out.length])
        : await this.db.execute(`SELECT * FROM ${this.ks}.open_flags WHERE app_id = ? AND month = ? LIMIT ?`, [appId, month, limit - out.length]);
      for (const r of rows.rows) out.push(this.read(r, appId));
    }
    return out;
  }

  async get(appId: string, flagId: string): Promise<MessageFlag | undefined> {
    const time = idTime(flagId);
    if (!Number.isFinite(time) || time < Date.now() - QUEUE_KEPT_MS) return undefined;
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.open_flags WHERE app_id = ? AND month = ? AND id = ?`, [appId, monthOf(time), flagId])).first();
    return row ? this.read(row, appId) : undefined;
  }

  async resolve(appId: string, chatId: string, messageId: string, flagId: string): Promise<MessageFlag[]> {
    const open = await this.openIds(appId, chatId, messageId);
    const closed: MessageFlag[] = [];
    for (const id of new Set([flagId, ...open.map((o) => o.id)])) {
      const flag = await this.get(appId, id);
      if (!flag) continue;
      closed.push(flag);
      await this.db.execute(`DELETE FROM ${this.ks}.open_flags WHERE app_id = ? AND month = ? AND id = ?`, [appId, monthOf(idTime(id)), id]);
    }
    await Promise.all(open.map((o) => this.db.execute(`UPDATE ${this.ks}.message_flags SET open = false WHERE app_id = ? AND chat_id = ? AND message_id = ? AND flagged_by = ?`, [appId, chatId, messageId, o.user])));
    return closed.sort((a, b) => (a.id < b.id ? 1 : -1));
  }

  async hideThreshold(appId: string): Promise<number> {
    const row = (await this.db.execute(`SELECT flag_hide_threshold FROM ${this.ks}.moderation_settings WHERE app_id = ?`, [appId])).first();
    const n = row?.get('flag_hide_threshold') as number | null | undefined;
    return n ?? 0;
  }

  async setHideThreshold(appId: string, threshold: number): Promise<void> {
    await this.db.execute(`INSERT INTO ${this.ks}.moderation_settings (app_id, flag_hide_threshold) VALUES (?, ?)`, [appId, threshold]);
  }
}
