import type { FlagStore, MessageFlag } from '../types.ts';
import { uuidv7Time as idTime } from '../buckets.ts';
import { uuidv7Floor, ACTIONS_KEPT_MS } from './moderation.ts';
import { END, type Tables } from './shared.ts';

/** Open flags stay in the queue this long (as the moderation log's actions). */
const FLAGS_KEPT_MS = ACTIONS_KEPT_MS;

interface FlagMark {
  id: string;
  open: boolean;
}

/**
 * Keys: ['f', app, chat, message, user] → FlagMark (who flagged a message, bounded by the chat's
 * members); ['q', app, flag id] → MessageFlag (the open queue); ['h', app] → the hide threshold.
 * A flag and its queue entry are one transaction; a new flag drops the application's queue entries
 * older than 90 days (a range below one key), as the moderation log does.
 */
export class LmdbFlags implements FlagStore {
  constructor(private readonly t: Tables) {}

  flag(flag: MessageFlag): Promise<{ result: 'flagged' | 'exists'; open: number }> {
    return this.t.root.transaction(() => {
      const key = ['f', flag.appId, flag.chatId, flag.messageId, flag.flaggedBy];
      if (this.t.db.get(key) !== undefined) return { result: 'exists' as const, open: this.openOf(flag.appId, flag.chatId, flag.messageId).length };
      this.t.db.put(key, { id: flag.id, open: true } satisfies FlagMark);
      this.t.db.put(['q', flag.appId, flag.id], flag);
      const floor = uuidv7Floor(idTime(flag.id) - FLAGS_KEPT_MS);
      for (const old of [...this.t.db.getKeys({ start: ['q', flag.appId, ''], end: ['q', flag.appId, floor] })]) this.t.db.remove(old);
      return { result: 'flagged' as const, open: this.openOf(flag.appId, flag.chatId, flag.messageId).length };
    });
  }

  private openOf(appId: string, chatId: string, messageId: string): { user: string; mark: FlagMark }[] {
    const out: { user: string; mark: FlagMark }[] = [];
    for (const { key, value } of this.t.db.getRange({ start: ['f', appId, chatId, messageId, ''], end: ['f', appId, chatId, messageId, END] })) {
      const mark = value as FlagMark;
      if (mark.open) out.push({ user: String(key[4]), mark });
    }
    return out;
  }

  async open(appId: string, beforeId: string | undefined, limit: number): Promise<MessageFlag[]> {
    const out: MessageFlag[] = [];
    const floor = uuidv7Floor(Date.now() - FLAGS_KEPT_MS);
    for (const { value } of this.t.db.getRange({ start: ['q', appId, beforeId ?? END], end: ['q', appId, floor], reverse: true })) {
      const flag = value as MessageFlag;
      if (flag.id === beforeId) continue;
      out.push(flag);
      if (out.length >= limit) break;
    }
    return out;
  }

  async get(appId: string, flagId: string): Promise<MessageFlag | undefined> {
    const flag = this.t.db.get(['q', appId, flagId]) as MessageFlag | undefined;
    return flag && idTime(flag.id) > Date.now() - FLAGS_KEPT_MS ? flag : undefined;
  }

  resolve(appId: string, chatId: string, messageId: string, flagId: string): Promise<MessageFlag[]> {
    return this.t.root.transaction(() => {
      const closed: MessageFlag[] = [];
      const open = this.openOf(appId, chatId, messageId);
      const ids = new Set([flagId, ...open.map((o) => o.mark.id)]);
      for (const { user, mark } of open) this.t.db.put(['f', appId, chatId, messageId, user], { ...mark, open: false });
      for (const id of ids) {
        const flag = this.t.db.get(['q', appId, id]) as MessageFlag | undefined;
        if (!flag) continue;
        closed.push(flag);
        this.t.db.remove(['q', appId, id]);
      }
      return closed.sort((a, b) => (a.id < b.id ? 1 : -1));
    });
  }

  async hideThreshold(appId: string): Promise<number> {
    return (this.t.db.get(['h', appId]) as number | undefined) ?? 0;
  }

  async setHideThreshold(appId: string, threshold: number): Promise<void> {
    await this.t.db.put(['h', appId], threshold);
  }
}
