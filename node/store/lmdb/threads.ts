import type { InboxPosition, ThreadFollow, ThreadStore } from '../types.ts';
import { END, type Tables } from './shared.ts';

/**
 * Keys: ['u', app, user, chat, parent] → ThreadFollow (a user's threads); ['f', app, chat, parent,
 * user] → whether the user follows (a thread's followers); ['a', app, user, activityAt, chat,
 * parent] → true for each followed thread (the inbox, by activity); ['x', app, user, chat,
 * parent] → true for each followed thread with unread replies. A row and its entries are written
 * in one transaction, which reads the row it replaces: no entry is ever stale here.
 */
export class LmdbThreads implements ThreadStore {
  constructor(private readonly t: Tables) {}

  async get(appId: string, userId: string, chatId: string, parentId: string): Promise<ThreadFollow | undefined> {
    return this.t.db.get(['u', appId, userId, chatId, parentId]) as ThreadFollow | undefined;
  }

  async getMany(appId: string, userId: string, keys: readonly { chatId: string; parentId: string }[]): Promise<(ThreadFollow | undefined)[]> {
    return Promise.all(keys.map((k) => this.get(appId, userId, k.chatId, k.parentId)));
  }

  put(rows: ThreadFollow[]): Promise<void> {
    return this.t.root.transaction(() => {
      for (const row of rows) this.write(row);
    });
  }

  /** Writes a row and its entries, dropping those of the row it replaces. Inside a transaction. */
  private write(row: ThreadFollow): void {
    const { appId, userId, chatId, parentId } = row;
    const previous = this.t.db.get(['u', appId, userId, chatId, parentId]) as ThreadFollow | undefined;
    if (previous?.following) this.t.db.remove(['a', appId, userId, previous.activityAt, chatId, parentId]);
    this.t.db.put(['u', appId, userId, chatId, parentId], row);
    this.t.db.put(['f', appId, chatId, parentId, userId], row.following);
    if (row.following) this.t.db.put(['a', appId, userId, row.activityAt, chatId, parentId], true);
    if (row.following && row.lastSeq > row.readSeq) this.t.db.put(['x', appId, userId, chatId, parentId], true);
    else this.t.db.remove(['x', appId, userId, chatId, parentId]);
  }

  touch(appId: string, chatId: string, parentId: string, userIds: string[], lastSeq: number, at: string): Promise<void> {
    // The row each replaces is read here, so the previous activity is the row's own.
    return this.t.root.transaction(() => {
      for (const userId of userIds) {
        const row = this.t.db.get(['u', appId, userId, chatId, parentId]) as ThreadFollow | undefined;
        if (row && row.lastSeq < lastSeq) this.write({ ...row, lastSeq, activityAt: at });
      }
    });
  }

  async followers(appId: string, chatId: string, parentId: string): Promise<string[]> {
    const out: string[] = [];
    for (const { key, value } of this.t.db.getRange({ start: ['f', appId, chatId, parentId, ''], end: ['f', appId, chatId, parentId, END] })) {
      if (value === true) out.push(String(key[4]));
    }
    return out;
  }

  async threadsOf(appId: string, userId: string, chatId?: string): Promise<ThreadFollow[]> {
    const prefix = chatId === undefined ? ['u', appId, userId] : ['u', appId, userId, chatId];
    return [...this.t.db.getRange({ start: [...prefix, ''], end: [...prefix, END] })].map(({ value }) => value as ThreadFollow);
  }

  forget(appId: string, userId: string, chatId: string, parentId: string): Promise<void> {
    return this.t.root.transaction(() => {
      const row = this.t.db.get(['u', appId, userId, chatId, parentId]) as ThreadFollow | undefined;
      if (row?.following) this.t.db.remove(['a', appId, userId, row.activityAt, chatId, parentId]);
      this.t.db.remove(['u', appId, userId, chatId, parentId]);
      this.t.db.remove(['f', appId, chatId, parentId, userId]);
      this.t.db.remove(['x', appId, userId, chatId, parentId]);
    });
  }

  async byActivity(appId: string, userId: string, after: InboxPosition | undefined, limit: number): Promise<InboxPosition[]> {
    const out: InboxPosition[] = [];
    const start = after ? ['a', appId, userId, after.activityAt, after.chatId, after.parentId] : ['a', appId, userId, END];
    for (const { key } of this.t.db.getRange({ start, end: ['a', appId, userId], reverse: true })) {
      const position = { activityAt: String(key[3]), chatId: String(key[4]), parentId: String(key[5]) };
      // The range starts at `after` itself, which is not after itself.
      if (after && position.activityAt === after.activityAt && position.chatId === after.chatId && position.parentId === after.parentId) continue;
      out.push(position);
      if (out.length >= limit) break;
    }
    return out;
  }

  async unread(appId: string, userId: string): Promise<{ chatId: string; parentId: string }[]> {
    return [...this.t.db.getKeys({ start: ['x', appId, userId, ''], end: ['x', appId, userId, END] })].map((key) => ({ chatId: String(key[3]), parentId: String(key[4]) }));
  }
}
