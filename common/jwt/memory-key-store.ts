import { KeyRotationConflict, rotatedKeys, type SigningKeyStore } from './key-ring.ts';
import type { SigningKey } from './keys.ts';

/** SigningKeyStore in this process's memory: for tests, and the reference the stores are checked against. */
export class MemorySigningKeys implements SigningKeyStore {
  private keys: SigningKey[] = [];

  async ensure(candidate: SigningKey): Promise<SigningKey> {
    if (this.keys.length === 0) this.keys = [candidate];
    return this.keys[0]!;
  }

  async list(): Promise<SigningKey[]> {
    return [...this.keys];
  }

  async rotate(next: SigningKey, retireAt: string): Promise<void> {
    if (this.keys.some((k) => k.kid === next.kid)) throw new KeyRotationConflict();
    this.keys = rotatedKeys(this.keys, next, retireAt);
  }
}
