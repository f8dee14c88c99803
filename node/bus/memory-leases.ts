import type { Lease, LeaseCounts, Leases } from './leases.ts';

interface Entry {
  value: string;
  expiresAt: number;
}

/**
 * Leases in process memory, for the standalone deployment and for several nodes in one process
 * (they share one instance, as cluster nodes share one Redis). JavaScript runs one call at a time,
 * which makes each call atomic. `now` is injectable for tests that move time by hand.
 */
export class MemoryLeases implements Leases {
  private readonly sets = new Map<string, Map<string, Entry>>();
  private nextSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async renew(key: string, leases: readonly Lease[], ttlMs: number): Promise<LeaseCounts> {
    const now = this.now();
    this.sweep(now);
    let set = this.prune(key, now);
    const before = set?.size ?? 0;
    if (!set) this.sets.set(key, (set = new Map()));
    for (const { member, value } of leases) set.set(member, { value, expiresAt: now + ttlMs });
    return { before, after: set.size };
  }

  async remove(key: string, members: readonly string[]): Promise<LeaseCounts> {
    const set = this.prune(key, this.now());
    if (!set) return { before: 0, after: 0 };
    const before = set.size;
    for (const member of members) set.delete(member);
    if (set.size === 0) this.sets.delete(key);
    return { before, after: set.size };
  }

  async live(key: string): Promise<Lease[]> {
    const set = this.prune(key, this.now());
    if (!set) return [];
    return [...set].map(([member, { value }]) => ({ member, value })).sort((a, b) => (a.member < b.member ? -1 : a.member > b.member ? 1 : 0));
  }

  async count(key: string): Promise<number> {
    return this.prune(key, this.now())?.size ?? 0;
  }

  async close(): Promise<void> {
    // Shared by every node of the process; nothing to release.
  }

  /** The key's set without expired members, or undefined when none is left. */
  private prune(key: string, now: number): Map<string, Entry> | undefined {
    const set = this.sets.get(key);
    if (!set) return undefined;
    for (const [member, entry] of set) if (entry.expiresAt <= now) set.delete(member);
    if (set.size > 0) return set;
    this.sets.delete(key);
    return undefined;
  }

  /** Keys nobody reads again (a user whose node died) are dropped by a sweep at most once a minute. */
  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + 60_000;
    for (const key of [...this.sets.keys()]) this.prune(key, now);
  }
}
