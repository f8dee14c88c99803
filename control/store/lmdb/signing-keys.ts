import type { RootDatabase } from 'lmdb';
import { KeyRotationConflict, rotatedKeys, type SigningKey } from '../../../common/jwt/index.ts';
import { rangeValues, type Db } from './shared.ts';
import type { SigningKeyStore } from '../types.ts';

export class LmdbSigningKeys implements SigningKeyStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Db,
  ) {}

  ensure(candidate: SigningKey): Promise<SigningKey> {
    return this.root.transaction(() => {
      const existing = [...rangeValues<SigningKey>(this.db, ['k'])][0];
      if (existing) return existing;
      this.db.put(['k', candidate.createdAt, candidate.kid], candidate);
      return candidate;
    });
  }

  async list(): Promise<SigningKey[]> {
    return [...rangeValues<SigningKey>(this.db, ['k'])];
  }

  // One write transaction: it reads and writes the keys alone, so no rotation ever conflicts here.
  async rotate(next: SigningKey, retireAt: string): Promise<void> {
    const done = await this.root.transaction(() => {
      const keys = [...rangeValues<SigningKey>(this.db, ['k'])];
      if (keys.some((k) => k.kid === next.kid)) return false;
      for (const k of rotatedKeys(keys, next, retireAt)) this.db.put(['k', k.createdAt, k.kid], k);
      return true;
    });
    if (!done) throw new KeyRotationConflict();
  }
}
