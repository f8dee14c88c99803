import type { Database, RootDatabase } from 'lmdb';
import type { MfaState, MfaStore } from '../types.ts';
import { END, type Key } from './shared.ts';

/**
 * The embedded MFA store: ['m', account] the state, ['r', account, hash] a recovery code (its
 * value the time it was used, '' while unused), ['c', id] a used challenge (its expiry, ms).
 * Every check-and-write runs in one write transaction.
 */
export class LmdbMfa implements MfaStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Database<unknown, Key>,
  ) {}

  async get(accountId: string): Promise<MfaState | undefined> {
    return this.db.get(['m', accountId]) as MfaState | undefined;
  }

  begin(accountId: string, secret: string): Promise<'pending' | 'enabled'> {
    return this.root.transaction(() => {
      const state = this.db.get(['m', accountId]) as MfaState | undefined;
      if (state?.secret) return 'enabled' as const;
      this.db.put(['m', accountId], { lastStep: 0, ...state, pendingSecret: secret });
      return 'pending' as const;
    });
  }

  confirm(accountId: string, secret: string, recoveryHashes: string[], step: number, now: string): Promise<'enabled' | 'stale'> {
    return this.root.transaction(() => {
      const state = this.db.get(['m', accountId]) as MfaState | undefined;
      if (!state || state.secret || state.pendingSecret !== secret) return 'stale' as const;
      this.removeCodes(accountId);
      for (const hash of recoveryHashes) this.db.put(['r', accountId, hash], '');
      this.db.put(['m', accountId], { secret, enabledAt: now, lastStep: step } satisfies MfaState);
      return 'enabled' as const;
    });
  }

  useStep(accountId: string, step: number): Promise<boolean> {
    return this.root.transaction(() => {
      const state = this.db.get(['m', accountId]) as MfaState | undefined;
      if (!state?.secret || step <= state.lastStep) return false;
      this.db.put(['m', accountId], { ...state, lastStep: step });
      return true;
    });
  }

  useRecoveryCode(accountId: string, hash: string, now: string): Promise<boolean> {
    return this.root.transaction(() => {
      if (this.db.get(['r', accountId, hash]) !== '') return false;
      this.db.put(['r', accountId, hash], now);
      return true;
    });
  }

  async unusedRecoveryCodes(accountId: string): Promise<number> {
    let n = 0;
    for (const { value } of this.db.getRange({ start: ['r', accountId], end: ['r', accountId, END] })) if (value === '') n++;
    return n;
  }

  async disable(accountId: string): Promise<void> {
    await this.root.transaction(() => {
      this.db.remove(['m', accountId]);
      this.removeCodes(accountId);
    });
  }

  async challengeUsed(id: string): Promise<boolean> {
    return this.db.get(['c', id]) !== undefined;
  }

  useChallenge(id: string, expiresAtMs: number): Promise<boolean> {
    return this.root.transaction(() => {
      const now = Date.now();
      if (this.db.get(['c', id]) !== undefined) return false;
      this.db.put(['c', id], expiresAtMs);
      // Forget a few expired ones on the way, so the table stays as small as the live challenges.
      let swept = 0;
      for (const { key, value } of this.db.getRange({ start: ['c'], end: ['c', END] })) {
        if (swept >= 8) break;
        if (typeof value === 'number' && value < now) {
          this.db.remove(key);
          swept++;
        }
      }
      return true;
    });
  }

  private removeCodes(accountId: string): void {
    for (const { key } of this.db.getRange({ start: ['r', accountId], end: ['r', accountId, END] })) this.db.remove(key);
  }
}
