import type cassandra from 'cassandra-driver';
import { cql, num, STATEMENT_OPTIONS, str, type BatchStatement, type CassandraClient, type Cql } from '../../../common/cassandra/index.ts';
import type { ActivityPosition } from '../types.ts';

/** Users whose rows one activity batch carries: 3 statements each, under Cassandra's batch-size warning. */
const USERS_PER_BATCH = 8;
/** Partition keys one counter read names (`IN`), so a large group's check is a few requests. */
const USERS_PER_READ = 100;
/** Rounds of a list read that may meet only stale entries before it returns what it has. */
const MAX_ROUNDS = 8;

/** Whether `a` comes after `b` in a user's list (older activity; ties by chat id, as the table clusters). */
const below = (a: ActivityPosition, b: ActivityPosition) => a.at < b.at || (a.at === b.at && a.chatId < b.chatId);

interface Pointer {
  at: string | undefined;
  member: boolean;
}

/**
 * A user's chats (partition: app + user), in three tables:
 * - `user_chats` (app, user, chat) → `member`, `activity_at`: the membership pointer. `member` is
 *   written only by membership writes; an activity move writes `activity_at` alone, so a move that
 *   lands after a removal leaves a row without `member`, which every read ignores: it can never
 *   give a user back a chat.
 * - `user_chat_activity` (app, user, activity_at desc, chat desc): the list order. An entry counts
 *   only while its pointer is a member at the same time; others (left by a move whose previous
 *   time was not the stored one, or by a removal racing a move) are deleted by reads. An entry
 *   whose pointer is a member at a later time stands for the chat at that time: a move landing
 *   between a read's two queries (entries, then pointers) does not drop the chat from the page.
 * - `user_chat_counts` (app, user) → counter: memberships, +1 per join and −1 per leave. A counter
 *   write is not idempotent and not retried, so a failed one can leave it off; `recount` sets it
 *   from the pointers.
 * A pointer and its entry share the partition key, so each move or join of one user is one atomic
 * mutation.
 */
export class UserChatIndex {
  constructor(
    private readonly db: Cql,
    private readonly ks: string,
  ) {}

  private pointerWrite(appId: string, userId: string, chatId: string, at: string): BatchStatement[] {
    return [
      { query: `UPDATE ${this.ks}.user_chats SET member = true, activity_at = ? WHERE app_id = ? AND user_id = ? AND chat_id = ?`, params: [at, appId, userId, chatId] },
      { query: `INSERT INTO ${this.ks}.user_chat_activity (app_id, user_id, activity_at, chat_id) VALUES (?, ?, ?, ?)`, params: [appId, userId, at, chatId] },
    ];
  }

  private addToCount(appId: string, userId: string, delta: number) {
    return this.db.execute(`UPDATE ${this.ks}.user_chat_counts SET chats = chats + ? WHERE app_id = ? AND user_id = ?`, [delta, appId, userId]);
  }

  private async pointer(appId: string, userId: string, chatId: string): Promise<Pointer | undefined> {
    const row = (await this.db.execute(`SELECT member, activity_at FROM ${this.ks}.user_chats WHERE app_id = ? AND user_id = ? AND chat_id = ?`, [appId, userId, chatId])).first();
    return row ? { member: row.get('member') === true, at: row.get('activity_at') ?? undefined } : undefined;
  }

  /** A new membership, indexed at `at` (the chat's activity time), and counted. */
  async add(appId: string, userId: string, chatId: string, at: string): Promise<void> {
    await this.db.batch(this.pointerWrite(appId, userId, chatId, at));
    await this.addToCount(appId, userId, 1);
  }

  /** Re-asserts a membership an earlier failed write may have left unindexed (`at()` only then). */
  async ensure(appId: string, userId: string, chatId: string, at: () => Promise<string>): Promise<void> {
    const current = await this.pointer(appId, userId, chatId);
    if (current?.member && current.at !== undefined) return;
    await this.add(appId, userId, chatId, await at());
  }

  /** Ends a membership: its pointer, its entry and its count. */
  async remove(appId: string, userId: string, chatId: string): Promise<void> {
    const current = await this.pointer(appId, userId, chatId);
    if (!current?.member) return;
    const statements: BatchStatement[] = [{ query: `DELETE FROM ${this.ks}.user_chats WHERE app_id = ? AND user_id = ? AND chat_id = ?`, params: [appId, userId, chatId] }];
    if (current.at !== undefined) statements.push({ query: `DELETE FROM ${this.ks}.user_chat_activity WHERE app_id = ? AND user_id = ? AND activity_at = ? AND chat_id = ?`, params: [appId, userId, current.at, chatId] });
    await this.db.batch(statements);
    await this.addToCount(appId, userId, -1);
  }

  /**
   * Moves the chat to `at` for each user, without reading: `from` is the time the caller last
   * moved it to (an entry left elsewhere is stale, and skipped and deleted by reads).
   */
  async move(appId: string, chatId: string, userIds: string[], at: string, from: string | undefined): Promise<void> {
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < userIds.length; i += USERS_PER_BATCH) {
      const statements = userIds.slice(i, i + USERS_PER_BATCH).flatMap((userId) => [
        { query: `UPDATE ${this.ks}.user_chats SET activity_at = ? WHERE app_id = ? AND user_id = ? AND chat_id = ?`, params: [at, appId, userId, chatId] },
        { query: `INSERT INTO ${this.ks}.user_chat_activity (app_id, user_id, activity_at, chat_id) VALUES (?, ?, ?, ?)`, params: [appId, userId, at, chatId] },
        ...(from !== undefined && from !== at ? [{ query: `DELETE FROM ${this.ks}.user_chat_activity WHERE app_id = ? AND user_id = ? AND activity_at = ? AND chat_id = ?`, params: [appId, userId, from, chatId] }] : []),
      ]);
      writes.push(this.db.batch(statements));
    }
    await Promise.all(writes);
  }

  async chats(appId: string, userId: string): Promise<string[]> {
    const rows = (await this.db.execute(`SELECT chat_id, member FROM ${this.ks}.user_chats WHERE app_id = ? AND user_id = ?`, [appId, userId])).rows;
    return rows.filter((r) => r.get('member') === true).map((r) => str(r, 'chat_id'));
  }

  async page(appId: string, userId: string, after: ActivityPosition | undefined, limit: number): Promise<ActivityPosition[]> {
    // Each chat once, at the higher of its places (a moved chat's new entry and its pointer agree).
    const found = new Map<string, ActivityPosition>();
    const list = (e: ActivityPosition) => {
      const had = found.get(e.chatId);
      if (!had || below(had, e)) found.set(e.chatId, e);
    };
    let from = after;
    for (let round = 0; round < MAX_ROUNDS && found.size < limit; round++) {
      const want = limit - found.size;
      const readAt = Date.now() * 1000;
      const rows = from
        ? await this.db.execute(`SELECT activity_at, chat_id FROM ${this.ks}.user_chat_activity WHERE app_id = ? AND user_id = ? AND (activity_at, chat_id) < (?, ?) LIMIT ?`, [appId, userId, from.at, from.chatId, want])
        : await this.db.execute(`SELECT activity_at, chat_id FROM ${this.ks}.user_chat_activity WHERE app_id = ? AND user_id = ? LIMIT ?`, [appId, userId, want]);
      const entries = rows.rows.map((r) => ({ at: str(r, 'activity_at'), chatId: str(r, 'chat_id') }));
      if (entries.length === 0) break;
      const pointers = new Map<string, Pointer>();
      const ids = [...new Set(entries.map((e) => e.chatId))];
      for (const r of (await this.db.execute(`SELECT chat_id, member, activity_at FROM ${this.ks}.user_chats WHERE app_id = ? AND user_id = ? AND chat_id IN ?`, [appId, userId, ids])).rows) {
        pointers.set(str(r, 'chat_id'), { member: r.get('member') === true, at: r.get('activity_at') ?? undefined });
      }
      const stale: BatchStatement[] = [];
      for (const e of entries) {
        const p = pointers.get(e.chatId);
        if (p?.member && p.at === e.at) {
          list(e);
          continue;
        }
        // A pointer newer than its entry: the chat moved up between the two reads (its new entry
        // landed above what was read), or a stale entry of an earlier move was met. Either way the
        // chat belongs at its pointer's place, listed here when this page's range covers it (an
        // earlier round of the page may have read past that place before the move landed).
        if (p?.member && p.at !== undefined && p.at > e.at) {
          const moved = { at: p.at, chatId: e.chatId };
          if (after === undefined || below(moved, after)) list(moved);
        }
        // Stamped with the time of the read, so a write made after it (a rejoin at the same time) wins.
        stale.push({ query: `DELETE FROM ${this.ks}.user_chat_activity USING TIMESTAMP ? WHERE app_id = ? AND user_id = ? AND activity_at = ? AND chat_id = ?`, params: [readAt, appId, userId, e.at, e.chatId] });
      }
      if (stale.length > 0) void this.db.batch(stale).catch(() => undefined);
      if (entries.length < want) break;
      from = entries.at(-1);
    }
    // In the table's order: newest first.
    return [...found.values()].sort((a, b) => (below(a, b) ? 1 : below(b, a) ? -1 : 0));
  }

  async counts(appId: string, userIds: string[]): Promise<Map<string, number>> {
    const counts = new Map(userIds.map((id) => [id, 0]));
    const unique = [...counts.keys()];
    const reads: Promise<void>[] = [];
    for (let i = 0; i < unique.length; i += USERS_PER_READ) {
      const ids = unique.slice(i, i + USERS_PER_READ);
      reads.push(
        this.db.execute(`SELECT user_id, chats FROM ${this.ks}.user_chat_counts WHERE app_id = ? AND user_id IN ?`, [appId, ids]).then((result) => {
          for (const r of result.rows) counts.set(str(r, 'user_id'), r.get('chats') === null ? 0 : num(r, 'chats'));
        }),
      );
    }
    await Promise.all(reads);
    return counts;
  }

  async recount(appId: string, userId: string): Promise<number> {
    const [n, stored] = await Promise.all([this.chats(appId, userId).then((ids) => ids.length), this.counts(appId, [userId]).then((m) => m.get(userId) ?? 0)]);
    if (n !== stored) await this.addToCount(appId, userId, n - stored);
    return n;
  }
}

/**
 * Migration 007: indexes the memberships stored before the index existed (pointer rows without
 * `activity_at`) at their chat's activity time, and sets each such user's count from its pointers.
 * Rows written by this version always carry `activity_at`, so running it again changes nothing.
 * It reads the whole `user_chats` table (paged): see copy-first-layout.ts for running it ahead.
 */
export async function indexUserChats(client: CassandraClient, ks: string): Promise<void> {
  const db = cql(client);
  const index = new UserChatIndex(db, ks);
  const activity = new Map<string, string | null>();
  const touched = new Map<string, { appId: string; userId: string }>();
  const paged = { ...STATEMENT_OPTIONS, fetchSize: 500, autoPage: true };
  for await (const row of client.stream(`SELECT app_id, user_id, chat_id, activity_at FROM ${ks}.user_chats`, [], paged) as unknown as AsyncIterable<cassandra.types.Row>) {
    if (row.get('activity_at') !== null) continue;
    const [appId, userId, chatId] = [str(row, 'app_id'), str(row, 'user_id'), str(row, 'chat_id')];
    const key = `${appId}/${chatId}`;
    if (!activity.has(key)) activity.set(key, (await db.execute(`SELECT last_activity_at FROM ${ks}.chats WHERE app_id = ? AND id = ?`, [appId, chatId])).first()?.get('last_activity_at') ?? null);
    const at = activity.get(key);
    if (!at) continue; // the chat is gone: its pointer stays without `member`, which reads ignore
    await db.batch([
      { query: `UPDATE ${ks}.user_chats SET member = true, activity_at = ? WHERE app_id = ? AND user_id = ? AND chat_id = ?`, params: [at, appId, userId, chatId] },
      { query: `INSERT INTO ${ks}.user_chat_activity (app_id, user_id, activity_at, chat_id) VALUES (?, ?, ?, ?)`, params: [appId, userId, at, chatId] },
    ]);
    touched.set(`${appId}/${userId}`, { appId, userId });
  }
  for (const { appId, userId } of touched.values()) await index.recount(appId, userId);
}
