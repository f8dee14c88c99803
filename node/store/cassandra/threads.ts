import type { types } from 'cassandra-driver';
import { num, str, type Cql } from '../../../common/cassandra/index.ts';
import type { ThreadFollow, ThreadStore } from '../types.ts';

/**
 * Thread follows on Cassandra (migration node-019): `user_threads`, a partition per user (the
 * inbox's source, at most THREAD_LIMITS.follows rows), and `thread_followers`, a partition per
 * thread (at most the chat's members). A row's two partitions are written in one logged batch.
 * Writes are plain upserts, the chat's actor being a thread's only writer; `touch` updates columns
 * of rows it was told exist, so a row removed meanwhile may come back without `following`, which
 * reads as absent.
 */
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

  async put(rows: ThreadFollow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.batch(
      rows.flatMap((r) => [
        {
          query: `INSERT INTO ${this.ks}.user_threads (app_id, user_id, chat_id, parent_id, following, read_seq, last_seq, activity_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          params: [r.appId, r.userId, r.chatId, r.parentId, r.following, r.readSeq, r.lastSeq, r.activityAt],
        },
        { query: `INSERT INTO ${this.ks}.thread_followers (app_id, chat_id, parent_id, user_id, following) VALUES (?, ?, ?, ?, ?)`, params: [r.appId, r.chatId, r.parentId, r.userId, r.following] },
      ]),
      { logged: true },
    );
  }

  async touch(appId: string, chatId: string, parentId: string, userIds: string[], lastSeq: number, at: string): Promise<void> {
    if (userIds.length === 0) return;
    const query = `UPDATE ${this.ks}.user_threads SET last_seq = ?, activity_at = ? WHERE app_id = ? AND user_id = ? AND chat_id = ? AND parent_id = ?`;
    await this.db.batch(userIds.map((userId) => ({ query, params: [lastSeq, at, appId, userId, chatId, parentId] })), { logged: false });
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
    await this.db.batch(
      [
        { query: `DELETE FROM ${this.ks}.user_threads WHERE app_id = ? AND user_id = ? AND chat_id = ? AND parent_id = ?`, params: [appId, userId, chatId, parentId] },
        { query: `DELETE FROM ${this.ks}.thread_followers WHERE app_id = ? AND chat_id = ? AND parent_id = ? AND user_id = ?`, params: [appId, chatId, parentId, userId] },
      ],
      { logged: true },
    );
  }
}
