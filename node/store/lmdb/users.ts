import type { ChatUser, EventOptions, UserRefreshToken, UserRotateResult, UserSessionFamily, UserSessionStore, UserStore } from '../types.ts';
import { END, type EventSink, type Tables } from './shared.ts';

/** Keys: ['u', app, user] → user; ['n', app, username] → user id. */
export class LmdbUsers implements UserStore {
  constructor(
    private readonly t: Tables,
    private readonly events: EventSink,
  ) {}

  create(user: ChatUser, options?: EventOptions): Promise<'created' | 'exists'> {
    return this.t.root.transaction(() => {
      if (this.t.db.get(['n', user.appId, user.username]) !== undefined) return 'exists' as const;
      this.t.db.put(['n', user.appId, user.username], user.id);
      this.t.db.put(['u', user.appId, user.id], user);
      this.events(options?.events);
      return 'created' as const;
    });
  }

  async get(appId: string, userId: string): Promise<ChatUser | undefined> {
    return this.t.db.get(['u', appId, userId]) as ChatUser | undefined;
  }

  async getByUsername(appId: string, username: string): Promise<ChatUser | undefined> {
    const id = this.t.db.get(['n', appId, username]) as string | undefined;
    return id === undefined ? undefined : this.get(appId, id);
  }

  update(user: ChatUser): Promise<'updated' | 'not-found'> {
    return this.t.root.transaction(() => {
      if (this.t.db.get(['u', user.appId, user.id]) === undefined) return 'not-found' as const;
      this.t.db.put(['u', user.appId, user.id], user);
      return 'updated' as const;
    });
  }

  delete(appId: string, userId: string, options?: EventOptions): Promise<'deleted' | 'not-found'> {
    return this.t.root.transaction(() => {
      const user = this.t.db.get(['u', appId, userId]) as ChatUser | undefined;
      if (!user) return 'not-found' as const;
      this.t.db.remove(['u', appId, userId]);
      this.t.db.remove(['n', appId, user.username]);
      this.events(options?.events);
      return 'deleted' as const;
    });
  }
}

/** Keys: ['f', app, family] → family; ['t', app, hash] → token; ['uf', app, user, family] → true. */
export class LmdbUserSessions implements UserSessionStore {
  constructor(private readonly t: Tables) {}

  async createFamily(family: UserSessionFamily, first: UserRefreshToken): Promise<void> {
    await this.t.root.transaction(() => {
      this.t.db.put(['f', family.appId, family.id], family);
      this.t.db.put(['uf', family.appId, family.userId, family.id], true);
      this.t.db.put(['t', first.appId, first.hash], first);
    });
  }

  async getFamily(appId: string, id: string): Promise<UserSessionFamily | undefined> {
    return this.t.db.get(['f', appId, id]) as UserSessionFamily | undefined;
  }

  rotate(appId: string, oldHash: string, nextHash: string, now: string): Promise<UserRotateResult> {
    return this.t.root.transaction((): UserRotateResult => {
      const token = this.t.db.get(['t', appId, oldHash]) as UserRefreshToken | undefined;
      if (!token) return { kind: 'invalid' };
      const family = this.t.db.get(['f', appId, token.familyId]) as UserSessionFamily | undefined;
      if (!family || family.revokedAt) return { kind: 'invalid' };
      if (token.usedAt) {
        this.t.db.put(['f', appId, family.id], { ...family, revokedAt: now });
        return { kind: 'reused', familyId: family.id };
      }
      if (token.expiresAt <= now || family.expiresAt <= now) return { kind: 'invalid' };
      this.t.db.put(['t', appId, oldHash], { ...token, usedAt: now });
      const next: UserRefreshToken = { appId, hash: nextHash, familyId: family.id, userId: family.userId, expiresAt: token.expiresAt };
      this.t.db.put(['t', appId, nextHash], next);
      return { kind: 'rotated', userId: family.userId, familyId: family.id };
    });
  }

  async sweepExpired(now: string): Promise<number> {
    // Read outside the write transaction, removed in one: a key found expired stays expired.
    const expired: string[][] = [];
    for (const { key, value } of this.t.db.getRange({ start: ['f'], end: ['f', END] })) {
      const family = value as UserSessionFamily;
      if (family.expiresAt <= now) expired.push(key as string[], ['uf', family.appId, family.userId, family.id]);
    }
    for (const { key, value } of this.t.db.getRange({ start: ['t'], end: ['t', END] })) {
      if ((value as UserRefreshToken).expiresAt <= now) expired.push(key as string[]);
    }
    if (expired.length === 0) return 0;
    await this.t.root.transaction(() => {
      for (const key of expired) this.t.db.remove(key);
    });
    return expired.length;
  }

  async revokeAllForUser(appId: string, userId: string, now: string): Promise<void> {
    await this.t.root.transaction(() => {
      for (const { key } of this.t.db.getRange({ start: ['uf', appId, userId], end: ['uf', appId, userId, END] })) {
        const id = String(key[3]);
        const family = this.t.db.get(['f', appId, id]) as UserSessionFamily | undefined;
        if (family && !family.revokedAt) this.t.db.put(['f', appId, id], { ...family, revokedAt: now });
      }
    });
  }
}
