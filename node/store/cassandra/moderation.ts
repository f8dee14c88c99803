import type { types } from 'cassandra-driver';
import { applied, defined, opt, str, type Cql } from '../../../common/cassandra/index.ts';
import type { ChatBan, ModerationAction, ModerationStore, StoredBlocklist, UserBan, UserBlock } from '../types.ts';
import { uuidv7Time as idTime } from '../buckets.ts';

/** Cassandra's largest TTL (20 years). */
const MAX_TTL_SECONDS = 630_720_000;
/** Actions (and open flags) are kept 90 days (the tables' TTL; README, "Moderation"): four months cover them. */
export const ACTION_MONTHS = 4;

export const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);
export const monthsBack = (ms: number, n: number) => {
  const d = new Date(ms);
  return monthOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - n, 1));
};
const inForce = <B extends { expiresAt?: string }>(ban: B | undefined, now: string) => (ban && (ban.expiresAt === undefined || ban.expiresAt > now) ? ban : undefined);
/** The TTL of a ban's row: a minute past its expiry, none (0) without one or beyond Cassandra's largest. */
const banTtl = (expiresAt: string | undefined) => {
  const seconds = expiresAt === undefined ? 0 : Math.max(1, Math.ceil((Date.parse(expiresAt) - Date.now()) / 1000) + 60);
  return seconds > MAX_TTL_SECONDS ? 0 : seconds;
};

/**
 * Moderation on Cassandra (migration node-010). `user_bans`: one partition per application, a row
 * per banned user, written with a TTL that ends a timed ban's row soon after it lifts (so the
 * partition holds the bans in force, plus at most a minute of expired ones). `moderation_actions`:
 * partitioned by (application, month), newest first, rows kept 90 days (table TTL), so a partition
 * holds one application's actions of one month. An action is written before the ban it records.
 * `user_blocks` (migration node-011): one partition per blocking user, bounded by the most users one
 * blocks (USER_BLOCKS_MAX), its count a static column kept by compare-and-set. `chat_bans` (migration
 * node-013): one partition per chat, a row per banned user, timed bans ending by TTL like `user_bans`.
 */
export class CassandraModeration implements ModerationStore {
  constructor(
    private readonly db: Cql,
    private readonly ks: string,
  ) {}

  private record(a: ModerationAction) {
    return this.db.execute(
      `INSERT INTO ${this.ks}.moderation_actions (app_id, month, id, at, action, user_id, chat_id, message_id, by_whom, reason, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [a.appId, monthOf(idTime(a.id)), a.id, a.at, a.action, a.userId ?? null, a.chatId ?? null, a.messageId ?? null, a.by, a.reason ?? null, a.expiresAt ?? null],
    );
  }

  private readBan(row: types.Row): UserBan {
    return defined({ appId: str(row, 'app_id'), userId: str(row, 'user_id'), reason: opt(row, 'reason'), expiresAt: opt(row, 'expires_at'), createdAt: str(row, 'created_at'), by: str(row, 'by_whom') });
  }

  async ban(ban: UserBan, action: ModerationAction): Promise<void> {
    await this.record(action);
    // Cassandra's TTL is at most 20 years: a ban lifting later keeps its row (none: 0) until lifted.
    const ttl = banTtl(ban.expiresAt);
    await this.db.execute(
      `INSERT INTO ${this.ks}.user_bans (app_id, user_id, reason, expires_at, created_at, by_whom) VALUES (?, ?, ?, ?, ?, ?) USING TTL ?`,
      [ban.appId, ban.userId, ban.reason ?? null, ban.expiresAt ?? null, ban.createdAt, ban.by, ttl],
    );
  }

  async unban(appId: string, userId: string, action: ModerationAction, now: string): Promise<'unbanned' | 'not-banned'> {
    if (!(await this.banOf(appId, userId, now))) return 'not-banned';
    await this.record(action);
    await this.db.execute(`DELETE FROM ${this.ks}.user_bans WHERE app_id = ? AND user_id = ?`, [appId, userId]);
    return 'unbanned';
  }

  async banOf(appId: string, userId: string, now: string): Promise<UserBan | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.user_bans WHERE app_id = ? AND user_id = ?`, [appId, userId])).first();
    return inForce(row ? this.readBan(row) : undefined, now);
  }

  async bans(appId: string, now: string, afterUserId: string | undefined, limit: number): Promise<UserBan[]> {
    const out: UserBan[] = [];
    let after = afterUserId ?? '';
    // Expired rows not yet gone are skipped: read on until `limit` in force or the end.
    for (;;) {
      const rows = (await this.db.execute(`SELECT * FROM ${this.ks}.user_bans WHERE app_id = ? AND user_id > ? LIMIT ?`, [appId, after, limit])).rows;
      for (const row of rows) {
        const ban = inForce(this.readBan(row), now);
        if (ban) out.push(ban);
        if (out.length >= limit) return out;
      }
      if (rows.length < limit) return out;
      after = str(rows.at(-1)!, 'user_id');
    }
  }

  async block(appId: string, userId: string, blockedId: string, at: string, max: number): Promise<'blocked' | 'exists' | 'full'> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const rows = (await this.db.execute(`SELECT blocked_id, blocked_count FROM ${this.ks}.user_blocks WHERE app_id = ? AND user_id = ? AND blocked_id = ?`, [appId, userId, blockedId])).rows;
      if (rows.some((r) => r.get('blocked_id') !== null)) return 'exists';
      const count = await this.count(appId, userId);
      if (count >= max) return 'full';
      // The count moves by compare-and-set, so two blocks at once cannot both take the last place.
      const claimed = await this.db.execute(`UPDATE ${this.ks}.user_blocks SET blocked_count = ? WHERE app_id = ? AND user_id = ? IF blocked_count = ?`, [count + 1, appId, userId, count === 0 ? null : count]);
      if (!applied(claimed)) continue;
      await this.db.execute(`INSERT INTO ${this.ks}.user_blocks (app_id, user_id, blocked_id, blocked_at) VALUES (?, ?, ?, ?)`, [appId, userId, blockedId, at]);
      return 'blocked';
    }
    throw new Error('user blocks contended past 20 attempts');
  }

  private async count(appId: string, userId: string): Promise<number> {
    const row = (await this.db.execute(`SELECT blocked_count FROM ${this.ks}.user_blocks WHERE app_id = ? AND user_id = ? LIMIT 1`, [appId, userId])).first();
    const n = row?.get('blocked_count');
    return n === null || n === undefined ? 0 : Number(n);
  }

  async unblock(appId: string, userId: string, blockedId: string): Promise<'unblocked' | 'not-blocked'> {
    const gone = await this.db.execute(`DELETE FROM ${this.ks}.user_blocks WHERE app_id = ? AND user_id = ? AND blocked_id = ? IF EXISTS`, [appId, userId, blockedId]);
    if (!applied(gone)) return 'not-blocked';
    for (let attempt = 0; attempt < 20; attempt++) {
      const count = await this.count(appId, userId);
      const done = await this.db.execute(`UPDATE ${this.ks}.user_blocks SET blocked_count = ? WHERE app_id = ? AND user_id = ? IF blocked_count = ?`, [Math.max(0, count - 1), appId, userId, count]);
      if (applied(done)) break;
    }
    return 'unblocked';
  }

  async blocks(appId: string, userId: string, afterId: string | undefined, limit: number): Promise<UserBlock[]> {
    const rows = (await this.db.execute(`SELECT blocked_id, blocked_at FROM ${this.ks}.user_blocks WHERE app_id = ? AND user_id = ? AND blocked_id > ? LIMIT ?`, [appId, userId, afterId ?? '', limit])).rows;
    return rows.filter((r) => r.get('blocked_id') !== null).map((r) => ({ userId: str(r, 'blocked_id'), blockedAt: str(r, 'blocked_at') }));
  }

  async blockOf(appId: string, userId: string, otherId: string): Promise<UserBlock | undefined> {
    const row = (await this.db.execute(`SELECT blocked_at FROM ${this.ks}.user_blocks WHERE app_id = ? AND user_id = ? AND blocked_id = ?`, [appId, userId, otherId])).first();
    const at = row?.get('blocked_at') as string | null | undefined;
    return at === null || at === undefined ? undefined : { userId: otherId, blockedAt: at };
  }

  async log(action: ModerationAction): Promise<void> {
    await this.record(action);
  }

  async blocklist(appId: string): Promise<StoredBlocklist | undefined> {
    const row = (await this.db.execute(`SELECT entries_json, list_version, updated_at FROM ${this.ks}.blocklists WHERE app_id = ?`, [appId])).first();
    return row ? { entries: JSON.parse(str(row, 'entries_json')) as StoredBlocklist['entries'], version: str(row, 'list_version'), updatedAt: str(row, 'updated_at') } : undefined;
  }

  async setBlocklist(appId: string, list: StoredBlocklist): Promise<void> {
    await this.db.execute(`INSERT INTO ${this.ks}.blocklists (app_id, entries_json, list_version, updated_at) VALUES (?, ?, ?, ?)`, [appId, JSON.stringify(list.entries), list.version, list.updatedAt]);
  }

  async actions(appId: string, beforeId: string | undefined, limit: number): Promise<ModerationAction[]> {
    const out: ModerationAction[] = [];
    const from = beforeId === undefined ? Date.now() : idTime(beforeId);
    for (let back = 0; back < ACTION_MONTHS && out.length < limit; back++) {
      const month = monthsBack(from, back);
      const rows = beforeId !== undefined && back === 0
        ? await this.db.execute(`SELECT * FROM ${this.ks}.moderation_actions WHERE app_id = ? AND month = ? AND id < ? LIMIT ?`, [appId, month, beforeId, limit - out.length])
        : await this.db.execute(`SELECT * FROM ${this.ks}.moderation_actions WHERE app_id = ? AND month = ? LIMIT ?`, [appId, month, limit - out.length]);
      for (const r of rows.rows) {
        out.push(defined({ appId, id: str(r, 'id'), at: str(r, 'at'), action: str(r, 'action') as ModerationAction['action'], userId: opt(r, 'user_id'), chatId: opt(r, 'chat_id'), messageId: opt(r, 'message_id'), by: str(r, 'by_whom'), reason: opt(r, 'reason'), expiresAt: opt(r, 'expires_at') }));
      }
    }
    return out;
  }

  private readChatBan(row: types.Row): ChatBan {
    return defined({ appId: str(row, 'app_id'), chatId: str(row, 'chat_id'), userId: str(row, 'user_id'), reason: opt(row, 'reason'), expiresAt: opt(row, 'expires_at'), createdAt: str(row, 'created_at'), by: str(row, 'by_whom') });
  }

  async chatBan(ban: ChatBan, action: ModerationAction): Promise<void> {
    await this.record(action);
    await this.db.execute(
      `INSERT INTO ${this.ks}.chat_bans (app_id, chat_id, user_id, reason, expires_at, created_at, by_whom) VALUES (?, ?, ?, ?, ?, ?, ?) USING TTL ?`,
      [ban.appId, ban.chatId, ban.userId, ban.reason ?? null, ban.expiresAt ?? null, ban.createdAt, ban.by, banTtl(ban.expiresAt)],
    );
  }

  async liftChatBan(appId: string, chatId: string, userId: string, action: ModerationAction, now: string): Promise<'lifted' | 'not-banned'> {
    if (!(await this.chatBanOf(appId, chatId, userId, now))) return 'not-banned';
    await this.record(action);
    await this.db.execute(`DELETE FROM ${this.ks}.chat_bans WHERE app_id = ? AND chat_id = ? AND user_id = ?`, [appId, chatId, userId]);
    return 'lifted';
  }

  async chatBanOf(appId: string, chatId: string, userId: string, now: string): Promise<ChatBan | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.chat_bans WHERE app_id = ? AND chat_id = ? AND user_id = ?`, [appId, chatId, userId])).first();
    return inForce(row ? this.readChatBan(row) : undefined, now);
  }

  async chatBans(appId: string, chatId: string, now: string, afterUserId: string | undefined, limit: number): Promise<ChatBan[]> {
    const out: ChatBan[] = [];
    let after = afterUserId ?? '';
    for (;;) {
      const rows = (await this.db.execute(`SELECT * FROM ${this.ks}.chat_bans WHERE app_id = ? AND chat_id = ? AND user_id > ? LIMIT ?`, [appId, chatId, after, limit])).rows;
      for (const row of rows) {
        const ban = inForce(this.readChatBan(row), now);
        if (ban) out.push(ban);
        if (out.length >= limit) return out;
      }
      if (rows.length < limit) return out;
      after = str(rows.at(-1)!, 'user_id');
    }
  }
}
