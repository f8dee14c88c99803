export interface LimitDecision {
  allowed: boolean;
  /** Seconds until the key's window ends; meaningful when not allowed. */
  retryAfterSeconds: number;
}

/**
 * Fixed-window counters per key, kept in memory. Expired windows are swept as new ones open, so
 * memory stays proportional to the keys active within one window.
 */
export class WindowLimiter {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  private nextSweep = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether another event for `key` is within the limit, without counting it. */
  check(key: string): LimitDecision {
    const w = this.current(key);
    return { allowed: !w || w.count < this.limit, retryAfterSeconds: w ? (w.endsAt - this.now()) / 1000 : 0 };
  }

  /** Counts one event and says whether it was within the limit. */
  hit(key: string): LimitDecision {
    const now = this.now();
    this.sweep(now);
    let w = this.current(key);
    if (!w) {
      w = { count: 0, endsAt: now + this.windowMs };
      this.windows.set(key, w);
    }
    w.count++;
    return { allowed: w.count <= this.limit, retryAfterSeconds: (w.endsAt - now) / 1000 };
  }

  reset(key: string): void {
    this.windows.delete(key);
  }

  private current(key: string) {
    const w = this.windows.get(key);
    if (w && w.endsAt <= this.now()) {
      this.windows.delete(key);
      return undefined;
    }
    return w;
  }

  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + this.windowMs;
    for (const [k, w] of this.windows) if (w.endsAt <= now) this.windows.delete(k);
  }
}
