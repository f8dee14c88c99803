import type { RootDatabase } from 'lmdb';
import { END, type Db } from './shared.ts';
import type { Account, AccountStore, RefreshTokenRecord, RotateResult, SessionFamily, SessionStore } from '../types.ts';

export class LmdbAccounts implements AccountStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Db,
  ) {}

  create(account: Account): Promise<'created' | 'exists'> {
    return this.root.transaction(() => {
      if (this.db.get(['e', account.email]) !== undefined) return 'exists' as const;
      this.db.put(['e', account.email], account.id);
      this.db.put(['a', account.id], account);
      return 'created' as const;
    });
  }

  async get(id: string): Promise<Account | undefined> {
    return this.db.get(['a', id]) as Account | undefined;
  }

  async getByEmail(email: string): Promise<Account | undefined> {
    const id = this.db.get(['e', email]) as string | undefined;
    return id === undefined ? undefined : (this.db.get(['a', id]) as Account | undefined);
  }

  update(account: Account): Promise<'updated' | 'not-found' | 'email-taken'> {
    return this.root.transaction(() => {
      const current = this.db.get(['a', account.id]) as Account | undefined;
      if (!current) return 'not-found' as const;
      if (current.email !== account.email) {
        if (this.db.get(['e', account.email]) !== undefined) return 'email-taken' as const;
        this.db.remove(['e', current.email]);
        this.db.put(['e', account.email], account.id);
      }
      this.db.put(['a', account.id], account);
      return 'updated' as const;
    });
  }
}

export class LmdbSessions implements SessionStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Db,
  ) {}

  async createFamily(family: SessionFamily, first: RefreshTokenRecord): Promise<void> {
    await this.root.transaction(() => {
      this.db.put(['f', family.id], family);
      this.db.put(['af', family.accountId, family.id], true);
      this.db.put(['t', first.hash], first);
    });
  }

  async getFamily(id: string): Promise<SessionFamily | undefined> {
    return this.db.get(['f', id]) as SessionFamily | undefined;
  }

  async findToken(hash: string): Promise<RefreshTokenRecord | undefined> {
    return this.db.get(['t', hash]) as RefreshTokenRecord | undefined;
  }

  rotate(oldHash: string, next: Omit<RefreshTokenRecord, 'familyId' | 'accountId'>, now: string): Promise<RotateResult> {
    return this.root.transaction((): RotateResult => {
      const token = this.db.get(['t', oldHash]) as RefreshTokenRecord | undefined;
      if (!token) return { kind: 'invalid' };
      const family = this.db.get(['f', token.familyId]) as SessionFamily | undefined;
      if (!family || family.revokedAt) return { kind: 'invalid' };
      if (token.usedAt) {
        this.db.put(['f', family.id], { ...family, revokedAt: now });
        return { kind: 'reused', familyId: family.id };
      }
      if (token.expiresAt <= now || family.expiresAt <= now) return { kind: 'invalid' };
      this.db.put(['t', oldHash], { ...token, usedAt: now });
      this.db.put(['t', next.hash], { ...next, familyId: family.id, accountId: family.accountId });
      return { kind: 'rotated', accountId: family.accountId, familyId: family.id };
    });
  }

  async revokeFamily(id: string, now: string): Promise<void> {
    await this.root.transaction(() => {
      const family = this.db.get(['f', id]) as SessionFamily | undefined;
      if (family && !family.revokedAt) this.db.put(['f', id], { ...family, revokedAt: now });
    });
  }

  async revokeAllForAccount(accountId: string, now: string, keep?: string): Promise<void> {
    await this.root.transaction(() => {
      for (const { key } of this.db.getRange({ start: ['af', accountId], end: ['af', accountId, END] })) {
        const id = String(key[2]);
        if (id === keep) continue;
        const family = this.db.get(['f', id]) as SessionFamily | undefined;
        if (family && !family.revokedAt) this.db.put(['f', id], { ...family, revokedAt: now });
      }
    });
  }
}
