/**
 * Slows password guessing without locking the owner out. Guesses are counted per account and
 * client address together: after `freeFailures` failures from one address, each further attempt
 * from that address must wait twice as long as the one before (1 s, 2 s, 4 s, … up to
 * `maxDelayMs`, refused with a retry hint meanwhile), while the same account from any other
 * address is unaffected. A success clears the count. The wait runs from the failure's answer
 * (`failed`), not from the attempt's arrival: a slow password check does not use up the wait, so
 * the refusal a client sees right after a failure is the full one whatever the check cost.
 * Entries end `windowMs` after their last failure; memory is bounded by the number of (account,
 * address) pairs that failed within the window, which the per-address attempt budget bounds in
 * turn.
 */
export interface GuessDecision {
  allowed: boolean;
  /** Seconds to wait before the next attempt is taken; meaningful when not allowed. */
  retryAfterSeconds: number;
}

interface Entry {
  failures: number;
  /** No attempt is taken before this time (ms). */
  notBefore: number;
  /** The entry is forgotten after this time (ms). */
  expiresAt: number;
}

export class GuessThrottle {
  private readonly entries = new Map<string, Entry>();
  private nextSweep = 0;

  constructor(
    private readonly freeFailures: number,
    private readonly windowMs: number,
    private readonly maxDelayMs: number = windowMs,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Takes an attempt for `account` from `address`, counted as a failure until `succeeded` is
   * called (so concurrent guesses cannot all slip in before any of them fails).
   */
  attempt(account: string, address: string): GuessDecision {
    const now = this.now();
    this.sweep(now);
    const key = `${address}\u0000${account}`;
    let entry = this.entries.get(key);
    if (entry && entry.expiresAt <= now) entry = undefined;
    if (entry && entry.notBefore > now) return { allowed: false, retryAfterSeconds: (entry.notBefore - now) / 1000 };
    entry ??= { failures: 0, notBefore: 0, expiresAt: 0 };
    entry.failures++;
    // From the `freeFailures`-th failure on, the next attempt waits: 1 s, then 2 s, 4 s, …
    this.arm(entry, now);
    this.entries.set(key, entry);
    return { allowed: true, retryAfterSeconds: 0 };
  }

  /** The attempt was wrong: the pair's wait starts again from now, the time of the answer. */
  failed(account: string, address: string): void {
    const entry = this.entries.get(`${address}\u0000${account}`);
    if (entry) this.arm(entry, this.now());
  }

  /** The attempt was right: the pair's count is cleared. */
  succeeded(account: string, address: string): void {
    this.entries.delete(`${address}\u0000${account}`);
  }

  private arm(entry: Entry, now: number): void {
    const over = entry.failures - this.freeFailures;
    entry.notBefore = over >= 0 ? now + Math.min(this.maxDelayMs, 1000 * 2 ** Math.min(over, 30)) : 0;
    entry.expiresAt = now + this.windowMs;
  }

  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + Math.min(this.windowMs, 60_000);
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}
