import type { Logger } from '../log/index.ts';
import { generateSigningKey, type SigningKey } from './keys.ts';

/**
 * Where a service keeps its signing keys (the control store for the control service's, the node
 * store for the nodes', which all share them). Implemented on LMDB, Cassandra, and in memory for
 * tests; one conformance suite per store checks this contract.
 */
export interface SigningKeyStore {
  /**
   * Stores `candidate` when the store holds no key (first start) and returns the first key ever
   * stored. Concurrent calls on an empty store agree on one key.
   */
  ensure(candidate: SigningKey): Promise<SigningKey>;
  /** Every key, retired ones included, oldest first; private halves included. */
  list(): Promise<SigningKey[]>;
  /**
   * Stores `next` and gives every other key without an earlier `retiresAt` that `retireAt`, in one
   * step: a reader sees all of it or none of it. Rotations are serialized, each applied to the keys
   * the one before wrote; where two race (Cassandra's compare-and-set), the loser rejects with
   * KeyRotationConflict having written nothing, as does a `next` whose kid is stored already.
   */
  rotate(next: SigningKey, retireAt: string): Promise<void>;
}

/** Another rotation changed the keys between this one's read and its write; nothing was written. */
export class KeyRotationConflict extends Error {
  override readonly name = 'KeyRotationConflict';
  readonly code = 'KEY_ROTATION_CONFLICT';
  constructor() {
    super('another key rotation ran at the same time; nothing was changed, list the keys and try again');
  }
}

/** The keys after rotating in `next`: the others retire at `retireAt` unless they retire sooner. For stores. */
export function rotatedKeys(keys: readonly SigningKey[], next: SigningKey, retireAt: string): SigningKey[] {
  const retired = keys.map((k) => (k.retiresAt !== undefined && Date.parse(k.retiresAt) <= Date.parse(retireAt) ? k : { ...k, retiresAt: retireAt }));
  return [...retired, next];
}

const startOf = (key: SigningKey): number => Date.parse(key.activeFrom ?? key.createdAt);
const retired = (key: SigningKey, now: number): boolean => key.retiresAt !== undefined && Date.parse(key.retiresAt) <= now;
/** Stored order: oldest first (ties by kid, so every process sorts alike). */
const byAge = (a: SigningKey, b: SigningKey): number => a.createdAt.localeCompare(b.createdAt) || a.kid.localeCompare(b.kid);

/**
 * One service's signing keys as last loaded from its store, and which key does what at a moment.
 *
 * Guarantees, given the keys:
 * - exactly one key signs at any moment: of the unretired keys whose `activeFrom` has come, the
 *   one that became active last (so a rotation takes over at its `activeFrom`, in every process
 *   that has loaded it, without any process telling another);
 * - a key verifies from the moment it is loaded, before it signs (a process whose clock runs
 *   ahead may sign with it first), until its `retiresAt`;
 * - the keys are only replaced by `update`, which tells the listeners when anything changed.
 */
export class KeyRing {
  private keys: readonly SigningKey[] = [];
  private readonly listeners: ((keys: readonly SigningKey[]) => void)[] = [];

  constructor(
    keys: readonly SigningKey[],
    private readonly now: () => number = Date.now,
  ) {
    if (keys.length === 0) throw new Error('a key ring needs at least one key');
    this.keys = [...keys].sort(byAge);
  }

  /** Takes the keys as loaded again; returns whether anything changed. A list without keys is ignored. */
  update(keys: readonly SigningKey[]): boolean {
    if (keys.length === 0) return false;
    const next = [...keys].sort(byAge);
    const summary = (list: readonly SigningKey[]) => list.map((k) => `${k.kid}/${k.activeFrom ?? ''}/${k.retiresAt ?? ''}`).join(',');
    if (summary(next) === summary(this.keys)) return false;
    this.keys = next;
    for (const listener of this.listeners) listener(this.keys);
    return true;
  }

  /** Called with every key after each change. */
  onChange(listener: (keys: readonly SigningKey[]) => void): void {
    this.listeners.push(listener);
  }

  /** Every key, retired ones included, oldest first. */
  all(): readonly SigningKey[] {
    return this.keys;
  }

  /** The key that signs now. Before any has become active (clock skew): the earliest to do so. */
  signing(): SigningKey {
    const now = this.now();
    let best: SigningKey | undefined;
    for (const k of this.keys) {
      if (retired(k, now) || startOf(k) > now) continue;
      if (!best || startOf(k) > startOf(best) || (startOf(k) === startOf(best) && byAge(k, best) > 0)) best = k;
    }
    if (best) return best;
    const waiting = this.keys.filter((k) => !retired(k, now)).sort((a, b) => startOf(a) - startOf(b));
    return waiting[0] ?? this.keys[this.keys.length - 1]!;
  }

  /** The keys whose tokens verify now: the signing key first, then the others not retired. */
  live(): SigningKey[] {
    const now = this.now();
    const signing = this.signing();
    return [signing, ...this.keys.filter((k) => k !== signing && !retired(k, now))];
  }
}

/** The service's keys: the store's, after storing a first one if it has none (first start). */
export async function loadKeyRing(store: Pick<SigningKeyStore, 'ensure' | 'list'>, now?: () => number): Promise<KeyRing> {
  await store.ensure(generateSigningKey());
  return new KeyRing(await store.list(), now);
}

/**
 * Reloads `ring` from `store` every `everyMs` (a rotation by the operator command is seen within
 * that), and logs when the signing key changes. A failed reload is logged and the keys kept.
 * Returns the function that stops it.
 */
export function watchKeyRing(ring: KeyRing, store: Pick<SigningKeyStore, 'list'>, everyMs: number, log: Logger): () => void {
  let signing = ring.signing().kid;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    store
      .list()
      .then((keys) => {
        if (ring.update(keys)) log.info({ kids: keys.map((k) => k.kid) }, 'signing keys reloaded');
        const now = ring.signing().kid;
        if (now !== signing) log.info({ kid: now, previous: signing }, `signing key ${now} signs from now on`);
        signing = now;
      })
      .catch((error: unknown) => log.warn({ err: String(error) }, 'cannot reload the signing keys; keeping the ones loaded'))
      .finally(() => (busy = false));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
