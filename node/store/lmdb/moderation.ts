import type { ChatBan, ModerationAction, ModerationStore, StoredBlocklist, UserBan, UserBlock } from '../types.ts';
import { uuidv7Time } from '../buckets.ts';
import { END, type Tables } from './shared.ts';

/** Moderation actions are kept this long (README, "Moderation"). */
export const ACTIONS_KEPT_MS = 90 * 24 * 3600_000;

/** The smallest UUIDv7 made at `ms` or later, as a string: ids below it were made before `ms`. */
export function uuidv7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}

const inForce = <B extends { expiresAt?: string }>(ban: B | undefined, now: string) => (ban && (ban.expiresAt === undefined || ban.expiresAt > now) ? ban : undefined);

/**
 * Keys: ['b', app, user] → UserBan; ['a', app, action id] → ModerationAction; ['k', app, user,
 * blocked user] → the time it was blocked; ['kn', app, user] → how many it blocks; ['cb', app, chat,
 * user] → ChatBan. A ban and its action
 * are one transaction; recording an action also drops the application's actions older than 90
 * days (a range below one key), so the log stays bounded with no sweep of its own.
 */
export class LmdbModeration implements ModerationStore {
  constructor(private readonly t: Tables) {}

  private record(action: ModerationAction): void {
    this.t.db.put(['a', action.appId, action.id], action);
    // By the id's time, as everywhere the log is ordered.
    const floor = uuidv7Floor(uuidv7Time(action.id) - ACTIONS_KEPT_MS);
    for (const key of [...this.t.db.getKeys({ start: ['a', action.appId, ''], end: ['a', action.appId, floor] })]) this.t.db.remove(key);
  }

  async ban(ban: UserBan, action: ModerationAction): Promise<void> {
    await this.t.root.transaction(() => {
      this.t.db.put(['b', ban.appId, ban.userId], ban);
      this.record(action);
    });
  }

  unban(appId: string, userId: string, action: ModerationAction, now: string): Promise<'unbanned' | 'not-banned'> {
    return this.t.root.transaction(() => {
      const ban = this.t.db.get(['b', appId, userId]) as UserBan | undefined;
      if (ban) this.t.db.remove(['b', appId, userId]);
      if (!inForce(ban, now)) return 'not-banned' as const;
      this.record(action);
      return 'unbanned' as const;
    });
  }

  async banOf(appId: string, userId: string, now: string): Promise<UserBan | undefined> {
    return inForce(this.t.db.get(['b', appId, userId]) as UserBan | undefined, now);
  }

  async bans(appId: string, now: string, afterUserId: string | undefined, limit: number): Promise<UserBan[]> {
    const out: UserBan[] = [];
    for (const { key, value } of this.t.db.getRange({ start: ['b', appId, afterUserId ?? ''], end: ['b', appId, END] })) {
      if (afterUserId !== undefined && key[2] === afterUserId) continue;
      const ban = inForce(value as UserBan, now);
      if (ban) out.push(ban);
      if (out.length >= limit) break;
    }
    return out;
  }

  block(appId: string, userId: string, blockedId: string, at: string, max: number): Promise<'blocked' | 'exists' | 'full'> {
    return this.t.root.transaction(() => {
      if (this.t.db.get(['k', appId, userId, blockedId]) !== undefined) return 'exists' as const;
      const n = (this.t.db.get(['kn', appId, userId]) as number | undefined) ?? 0;
      if (n >= max) return 'full' as const;
      this.t.db.put(['k', appId, userId, blockedId], at);
      this.t.db.put(['kn', appId, userId], n + 1);
      return 'blocked' as const;
    });
  }

  unblock(appId: string, userId: string, blockedId: string): Promise<'unblocked' | 'not-blocked'> {
    return this.t.root.transaction(() => {
      if (this.t.db.get(['k', appId, userId, blockedId]) === undefined) return 'not-blocked' as const;
      this.t.db.remove(['k', appId, userId, blockedId]);
      this.t.db.put(['kn', appId, userId], Math.max(0, ((this.t.db.get(['kn', appId, userId]) as number | undefined) ?? 1) - 1));
      return 'unblocked' as const;
    });
  }

  async blocks(appId: string, userId: string, afterId: string | undefined, limit: number): Promise<UserBlock[]> {
    const out: UserBlock[] = [];
    for (const { key, value } of this.t.db.getRange({ start: ['k', appId, userId, afterId ?? ''], end: ['k', appId, userId, END] })) {
      if (afterId !== undefined && key[3] === afterId) continue;
      out.push({ userId: String(key[3]), blockedAt: value as string });
      if (out.length >= limit) break;
    }
    return out;
  }

  async blockOf(appId: string, userId: string, otherId: string): Promise<UserBlock | undefined> {
    const at = this.t.db.get(['k', appId, userId, otherId]) as string | undefined;
    return at === undefined ? undefined : { userId: otherId, blockedAt: at };
  }

  async log(action: ModerationAction): Promise<void> {
    await this.t.root.transaction(() => this.record(action));
  }

  async blocklist(appId: string): Promise<StoredBlocklist | undefined> {
    return this.t.db.get(['bl', appId]) as StoredBlocklist | undefined;
  }

  async setBlocklist(appId: string, list: StoredBlocklist): Promise<void> {
    await this.t.db.put(['bl', appId], list);
  }

  async actions(appId: string, beforeId: string | undefined, limit: number): Promise<ModerationAction[]> {
    const out: ModerationAction[] = [];
    for (const { value } of this.t.db.getRange({ start: ['a', appId, beforeId ?? END], end: ['a', appId, ''], reverse: true })) {
      const action = value as ModerationAction;
      if (action.id === beforeId) continue;
      out.push(action);
      if (out.length >= limit) break;
    }
    return out;
  }

  async chatBan(ban: ChatBan, action: ModerationAction): Promise<void> {
    await this.t.root.transaction(() => {
      this.t.db.put(['cb', ban.appId, ban.chatId, ban.userId], ban);
      this.record(action);
    });
  }

  liftChatBan(appId: string, chatId: string, userId: string, action: ModerationAction, now: string): Promise<'lifted' | 'not-banned'> {
    return this.t.root.transaction(() => {
      const ban = this.t.db.get(['cb', appId, chatId, userId]) as ChatBan | undefined;
      if (ban) this.t.db.remove(['cb', appId, chatId, userId]);
      if (!inForce(ban, now)) return 'not-banned' as const;
      this.record(action);
      return 'lifted' as const;
    });
  }

  async chatBanOf(appId: string, chatId: string, userId: string, now: string): Promise<ChatBan | undefined> {
    return inForce(this.t.db.get(['cb', appId, chatId, userId]) as ChatBan | undefined, now);
  }

  async chatBans(appId: string, chatId: string, now: string, afterUserId: string | undefined, limit: number): Promise<ChatBan[]> {
    const out: ChatBan[] = [];
    for (const { key, value } of this.t.db.getRange({ start: ['cb', appId, chatId, afterUserId ?? ''], end: ['cb', appId, chatId, END] })) {
      if (afterUserId !== undefined && key[3] === afterUserId) continue;
      const ban = inForce(value as ChatBan, now);
      if (ban) out.push(ban);
      if (out.length >= limit) break;
    }
    return out;
  }
}
