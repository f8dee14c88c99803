import type { ThreadFollow, ThreadStore } from '../types.ts';
import { END, type Tables } from './shared.ts';

/**
 * Keys: ['u', app, user, chat, parent] → ThreadFollow (a user's threads, the inbox's source);
 * ['f', app, chat, parent, user] → whether the user follows (a thread's followers). Both keys of a
 * row are written in one transaction.
 */
export class LmdbThreads implements ThreadStore {
  constructor(private readonly t: Tables) {}

  async get(appId: string, userId: string, chatId: string, parentId: string): Promise<ThreadFollow | undefined> {
    return this.t.db.get(['u', appId, userId, chatId, parentId]) as ThreadFollow | undefined;
  }

  put(rows: ThreadFollow[]): Promise<void> {
    return this.t.root.transaction(() => {
      for (const row of rows) this.write(row);
    });
  }

  private write(row: ThreadFollow): void {
    this.t.db.put(['u', row.appId, row.userId, row.chatId, row.parentId], row);
    this.t.db.put(['f', row.appId, row.chatId, row.parentId, row.userId], row.following);
  }

  touch(appId: string, chatId: string, parentId: string, userIds: string[], lastSeq: number, at: string): Promise<void> {
    return this.t.root.transaction(() => {
      for (const userId of userIds) {
        const row = this.t.db.get(['u', appId, userId, chatId, parentId]) as ThreadFollow | undefined;
        if (row && row.lastSeq < lastSeq) this.t.db.put(['u', appId, userId, chatId, parentId], { ...row, lastSeq, activityAt: at });
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
      this.t.db.remove(['u', appId, userId, chatId, parentId]);
      this.t.db.remove(['f', appId, chatId, parentId, userId]);
    });
  }
}
