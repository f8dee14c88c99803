
export interface LoadShedderOptions {
  /**
   * Event-loop delay above which the process takes less new work: the least lateness of a 10 ms
   * timer over a window (ms). The least, not the mean: a pause (a collection, a burst) makes a few
   * ticks late, while a process that cannot keep up makes every one late.
   */
  targetLagMs: number;
  /** How often the share of work taken is adjusted (ms). */
  windowMs: number;
  /** Units of work in progress at most (a bound on memory); past it everything new is refused. */
  maxInFlight: number;
  /** The smallest share of new work still taken while overloaded (so the process keeps serving). */
  minShare: number;
  /**
   * Below this many units in progress nothing is refused, whatever the lag: shedding bounds
   * queues, and refusing one of a handful of sends relieves nothing (after a burst of other work,
   * such as hundreds of sockets opening, a lone send must not get a 429).
   */
  floor: number;
}

export const LOAD_SHEDDING: Readonly<LoadShedderOptions> = Object.freeze({ targetLagMs: 75, windowMs: 100, maxInFlight: 20_000, minShare: 0.05, floor: 32 });

/** Where the event-loop delay comes from: its least value over the last window in ms (injectable for tests). */
export interface LagSource {
  sample(): number;
  close(): void;
}

/** How late a 10 ms timer fires, at the least since the last sample: how long work always waits for the loop. */
function eventLoopLag(): LagSource {
  const tickMs = 10;
  let last = performance.now();
  let least = Infinity;
  const timer = setInterval(() => {
    const now = performance.now();
    least = Math.min(least, Math.max(0, now - last - tickMs));
    last = now;
  }, tickMs);
  timer.unref();
  return {
    sample: () => {
      // A window with no tick at all was one long stall: count the time since the last tick.
      const lag = least === Infinity ? Math.max(0, performance.now() - last - tickMs) : least;
      least = Infinity;
      return lag;
    },
    close: () => clearInterval(timer),
  };
}

/**
 * Sheds new work at the edge of a process that cannot keep up, so that what it does take is
 * served with bounded latency instead of everything queueing until it times out. Two bounds:
 * - work in progress (`maxInFlight`): past it, new work is refused outright;
 * - CPU saturation, seen as event-loop delay: each window, the share of new work taken shrinks by
 *   a quarter while the delay is above `targetLagMs`, and grows back by a tenth of the whole
 *   while it is below (additive increase, multiplicative decrease), never below `minShare`. The
 *   share is applied evenly (every n-th unit), not at random.
 * Refusing costs a fraction of serving, so under twice the load a process keeps serving about
 * what it can.
 */
export class LoadShedder {
  private share = 1;
  private credit = 0;
  private inFlight = 0;
  /** Units in flight per tenant (only tenants with some). */
  private readonly byTenant = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly lag: LagSource;

  constructor(
    private readonly options: Readonly<LoadShedderOptions> = LOAD_SHEDDING,
    lag?: LagSource,
  ) {
    this.lag = lag ?? eventLoopLag();
    this.timer = setInterval(() => this.adjust(), options.windowMs);
    this.timer.unref();
  }

  /** The share of new work taken now (1 = all). */
  get taking(): number {
    return this.share;
  }

  get busy(): number {
    return this.inFlight;
  }

  /** Re-reads the delay and adjusts the share (called every window; public for tests). */
  adjust(): void {
    const lag = this.lag.sample();
    this.share = lag > this.options.targetLagMs ? Math.max(this.options.minShare, this.share * 0.75) : Math.min(1, this.share + 0.1);
  }

  /**
   * Takes one unit of work of `tenant` (if named), or refuses it (undefined). The returned function
   * ends it; call it exactly once, when the work is done (acknowledged or failed).
   */
  begin(tenant?: string): (() => void) | undefined {
    const mine = tenant === undefined ? 0 : (this.byTenant.get(tenant) ?? 0);
    // A tenant with fewer than `floor` units in flight is not the load: it is never shed, so one
    // tenant's overload does not refuse another's trickle (the process still bounds the total:
    // at most `floor` more per tenant past `maxInFlight`).
    const light = tenant !== undefined && mine < this.options.floor;
    if (!light) {
      if (this.inFlight >= this.options.maxInFlight) return undefined;
      if (this.inFlight >= this.options.floor) {
        this.credit += this.share;
        if (this.credit < 1) return undefined;
        this.credit -= 1;
      }
    }
    this.inFlight++;
    if (tenant !== undefined) this.byTenant.set(tenant, mine + 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.inFlight--;
      if (tenant === undefined) return;
      const left = (this.byTenant.get(tenant) ?? 1) - 1;
      if (left <= 0) this.byTenant.delete(tenant);
      else this.byTenant.set(tenant, left);
    };
  }

  close(): void {
    clearInterval(this.timer);
    this.lag.close();
  }
}
