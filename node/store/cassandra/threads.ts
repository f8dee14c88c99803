import cassandra, { type types } from 'cassandra-driver';
import { num, str, type Cql } from '../../../common/cassandra/index.ts';
import type { InboxPosition, ThreadFollow, ThreadStore } from '../types.ts';

/**
 * Thread follows on Cassandra (migrations node-019 and node-020): `user_threads`, a partition per
 * user (at most CHAT_LIMITS.threadFollows rows); `thread_followers`, a partition per thread (at
 * most the chat's members); and the user's inbox indexes, `user_thread_activity` and
 * `user_unread_threads`. A row's writes are one logged batch, after a read of the row it replaces
 * (`touch` reads nothing: it is told the thread's previous activity).
 * Writes are plain upserts, the chat's actor being a thread's only writer; `touch` updates columns
 * of rows it was told exist, so a row removed meanwhile may come back without `following`, which
 * reads as absent.
 */
/** Keys one multi-key read names at most. */
const IN_KEYS = 100;

export class CassandraThreads implements ThreadStore {
  constructor(
    private readonly db: Cql,
    private readonly ks: string,
  ) {}

  private read(row: types.Row, appId: string, userId: string): ThreadFollow | undefined {
    const following = row.get('following') as boolean | null;
    if (following === null) return undefined;
    return { appId, userId, chatId: str(row, 'chat_id'), parentId: str(row, 'parent_id'), following, readSeq: num(row, 'read_seq'), lastSeq: num(row, 'last_seq'), activityAt: str(row, 'activity_at') };
  }

  async get(appId: string, userId: string, chatId: string, parentId: string): Promise<ThreadFollow | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.user_threads WHERE app_id = ? AND user_id = ? AND chat_id = ? AND parent_id = ?`, [appId, userId, chatId, parentId])).first();
    return row ? this.read(row, appId, userId) : undefined;
  }

  async getMany(appId: string, userId: string, keys: readonly { chatId: string; parentId: string }[]): Promise<(ThreadFollow | undefined)[]> {
    if (keys.length === 0) return [];
    // One partition (the user's): a multi-column IN on its clustering key, a read per 100 keys.
    const found = new Map<string, ThreadFollow>();
    const chunks = Array.from({ length: Math.ceil(keys.length / IN_KEYS) }, (_, i) => keys.slice(i * IN_KEYS, (i + 1) * IN_KEYS));
    await Promise.all(
      chunks.map(async (chunk) => {
        const tuples = chunk.map((k) => new cassandra.types.Tuple(k.chatId, k.parentId));
        const rows = (await this.db.execute(`SELECT * FROM ${this.ks}.user_threads WHERE app_id = ? AND user_id = ? AND (chat_id, parent_id) IN ?`, [appId, userId, tuples])).rows;
        for (const r of rows) {
          const row = this.read(r, appId, userId);
          if (row) found.set(`${row.chatId}/${row.parentId}`, row);
        }
      }),
    );
    return keys.map((k) => found.get(`${k.chatId}/${k.parentId}`));
  }

  async put(rows: ThreadFollow[]): Promise<void> {
    if (rows.length === 0) return;
    // The rows they replace: their index entries are dropped in the same batch.
    const previous = await Promise.all(rows.map((r) => this.get(r.appId, r.userId, r.chatId, r.parentId)));
    await this.db.batch(
      rows.flatMap((r, i) => {
        const before = previous[i];
        const key = [r.appId, r.userId, r.chatId, r.parentId];
        return [
          ...(before?.following && before.activityAt !== r.activityAt ? [this.unindex(r.appId, r.userId, before.activityAt, r.chatId, r.parentId)] : []),
          {
            query: `INSERT INTO ${this.ks}.user_threads (app_id, user_id, chat_id, parent_id, following, read_seq, last_seq, activity_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
            params: [...key, r.following, r.readSeq, r.lastSeq, r.activityAt],
          },
          { query: `INSERT INTO ${this.ks}.thread_followers (app_id, chat_id, parent_id, user_id, following) VALUES (?, ?, ?, ?, ?)`, params: [r.appId, r.chatId, r.parentId, r.userId, r.following] },
          r.following ? this.index(r.appId, r.userId, r.activityAt, r.chatId, r.parentId) : this.unindex(r.appId, r.userId, r.activityAt, r.chatId, r.parentId),
          r.following && r.lastSeq > r.readSeq
            ? { query: `INSERT INTO ${this.ks}.user_unread_threads (app_id, user_id, chat_id, parent_id) VALUES (?, ?, ?, ?)`, params: key }
            : { query: `DELETE FROM ${this.ks}.user_unread_threads WHERE app_id = ? AND user_id = ? AND chat_id = ? AND parent_id = ?`, params: key },
        ];
      }),
      { logged: true },
    );
  }

  private index(appId: string, userId: string, at: string, chatId: string, parentId: string) {
    return { query: `INSERT INTO ${this.ks}.user_thread_activity (app_id, user_id, activity_at, chat_id, parent_id) VALUES (?, ?, ?, ?, ?)`, params: [appId, userId, at, chatId, parentId] };
  }

  private unindex(appId: string, userId: string, at: string, chatId: string, parentId: string) {
    return { query: `DELETE FROM ${this.ks}.user_thread_activity WHERE app_id = ? AND user_id = ? AND activity_at = ? AND chat_id = ? AND parent_id = ?`, params: [appId, userId, at, chatId, parentId] };
  }

  async touch(appId: string, chatId: string, parentId: string, userIds: string[], lastSeq: number, at: string, previousAt: string): Promise<void> {
    if (userIds.length === 0) return;
    const query = `UPDATE ${this.ks}.user_threads SET last_seq = ?, activity_at = ? WHERE app_id = ? AND user_id = ? AND chat_id = ? AND parent_id = ?`;
    await this.db.batch(
      userIds.flatMap((userId) => [
        { query, params: [lastSeq, at, appId, userId, chatId, parentId] },
        ...(previousAt !== at ? [this.unindex(appId, userId, previousAt, chatId, parentId)] : []),
        this.index(appId, userId, at, chatId, parentId),
        { query: `INSERT INTO ${this.ks}.user_unread_threads (app_id, user_id, chat_id, parent_id) VALUES (?, ?, ?, ?)`, params: [appId, userId, chatId, parentId] },
      ]),
      { logged: false },
    );
  }

  async followers(appId: string, chatId: string, parentId: string): Promise<string[]> {
    const rows = (await this.db.execute(`SELECT user_id, following FROM ${this.ks}.thread_followers WHERE app_id = ? AND chat_id = ? AND parent_id = ?`, [appId, chatId, parentId])).rows;
    return rows.filter((r) => r.get('following') === true).map((r) => str(r, 'user_id'));
  }

  async threadsOf(appId: string, userId: string, chatId?: string): Promise<ThreadFollow[]> {
    const rows =
      chatId === undefined
        ? (await this.db.execute(`SELECT * FROM ${this.ks}.user_threads WHERE app_id = ? AND user_id = ?`, [appId, userId])).rows
        : (await this.db.execute(`SELECT * FROM ${this.ks}.user_threads WHERE app_id = ? AND user_id = ? AND chat_id = ?`, [appId, userId, chatId])).rows;
    return rows.map((r) => this.read(r, appId, userId)).filter((r) => r !== undefined);
  }

  async forget(appId: string, userId: string, chatId: string, parentId: string): Promise<void> {
    const row = await this.get(appId, userId, chatId, parentId);
    await this.db.batch(
      [
        ...(row?.following ? [this.unindex(appId, userId, row.activityAt, chatId, parentId)] : []),
        { query: `DELETE FROM ${this.ks}.user_threads WHERE app_id = ? AND user_id = ? AND chat_id = ? AND parent_id = ?`, params: [appId, userId, chatId, parentId] },
        { query: `DELETE FROM ${this.ks}.thread_followers WHERE app_id = ? AND chat_id = ? AND parent_id = ? AND user_id = ?`, params: [appId, chatId, parentId, userId] },
        { query: `DELETE FROM ${this.ks}.user_unread_threads WHERE app_id = ? AND user_id = ? AND chat_id = ? AND parent_id = ?`, params: [appId, userId, chatId, parentId] },
      ],
      { logged: true },
    );
  }

  async byActivity(appId: string, userId: string, after: InboxPosition | undefined, limit: number): Promise<InboxPosition[]> {
    const rows = after
      ? (
          await this.db.execute(`SELECT activity_at, chat_id, parent_id FROM ${this.ks}.user_thread_activity WHERE app_id = ? AND user_id = ? AND (activity_at, chat_id, parent_id) < (?, ?, ?) LIMIT ?`, [
            appId,
            userId,
            after.activityAt,
            after.chatId,
            after.parentId,
            limit,
          ])
        ).rows
      : (await this.db.execute(`SELECT activity_at, chat_id, parent_id FROM ${this.ks}.user_thread_activity WHERE app_id = ? AND user_id = ? LIMIT ?`, [appId, userId, limit])).rows;
    return rows.map((r) => ({ activityAt: str(r, 'activity_at'), chatId: str(r, 'chat_id'), parentId: str(r, 'parent_id') }));
  }

  async unread(appId: string, userId: string): Promise<{ chatId: string; parentId: string }[]> {
    const rows = (await this.db.execute(`SELECT chat_id, parent_id FROM ${this.ks}.user_unread_threads WHERE app_id = ? AND user_id = ?`, [appId, userId])).rows;
    return rows.map((r) => ({ chatId: str(r, 'chat_id'), parentId: str(r, 'parent_id') }));
  }
}
