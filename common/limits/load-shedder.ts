export interface LoadShedderOptions {
  /**
   * Event-loop delay above which the process takes less new work: the least lateness of a 10 ms
   * timer over a window (ms). The least, not the mean: a pause (a collection, a burst) makes a few
   * ticks late, while a process that cannot keep up makes every one late.
   */
  targetLagMs: number;
  /**
   * Windows over `targetLagMs` in a row before the share shrinks (and every one after them while
   * the delay lasts and the queue keeps moving: see `sojournWindows`). One long pause (a
   * collection, the machine's cores taken by other processes for a moment) makes one window late and ends; a process that cannot keep up stays late. On the
   * cluster bench (3 nodes, Cassandra, Redis and the generator on 2 cores), at 2,300 msgs/s, lone
   * late windows (least delay 80-150 ms) on all nodes at once cut the share on each and refused
   * 105 sends of a 10 s run, though the next window was on time.
   */
  lagWindows: number;
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
  /**
   * A unit's sojourn is the time from taking it to its end: queueing and serving, on this process
   * and on the ones it waits on (the node owning the chat, the database). A window is late when
   * more than half of the units served in it took longer than this (ms): a median, not the least
   * as in CoDel, because an actor batches what arrives while it writes, so some units get
   * through fast even behind a standing queue, and not the mean, which a few units held
   * by one slow chat would carry.
   */
  targetSojournMs: number;
  /**
   * Late windows in a row before the share shrinks; the count then starts over, since a cut
   * shows only in the units taken after it. A stall (a flush, a collection) makes a window or
   * two late and ends; a standing queue keeps every window late. A window in which no unit was
   * served leaves the count as it was. Three rather than two, and a first cut only while the queue
   * does not drain by itself (see adjust): on the cluster bench at 2,300 msgs/s, stalls of 200-300
   * ms made two or three windows late on all nodes at once, the window after them ended far more
   * sends than it took and the one after that was on time, yet the cuts refused 110-167 sends of a
   * 10 s run; with both rules, none.
   *
   * Late windows cut only while the queue moves: since the streak began, the units in progress
   * (their mean over a window) grew or shrank by more than half a window's service (50 ms of work
   * at the rate served) and by more than `floor`; until then the streak goes on. A queue that
   * stays level while most units wait is a closed loop at capacity: each client sends again only
   * once answered, so the latency is the clients' own window over the service rate, and a refusal
   * relieves nothing, since the client sends again at once. Cutting it anyway made the node spend
   * its time refusing (webhooks bench, 64 senders with 16 sends each in flight: 64,000 to 142,000
   * refusals in a 5 s round and about half as many sends taken; 0 to 7,800 with this rule). Load that does
   * not wait for answers makes the queue grow until the share is cut under the rate served, and
   * then shrink, and cutting while it shrinks drains it faster.
   *
   * The delay rule takes the same test: a loop late because a closed loop at capacity keeps it
   * busy is not cut either. Each cut for delay starts its measure of movement over, so a queue
   * that rose once (clients starting) and then stays level is cut once, not for as long as the
   * delay lasts. On the sends bench (64 senders with 16 in flight each) the delay rule went on
   * cutting such a queue for as long as the round lasted (up to 20,236 sends of a 5 s round
   * refused); with this test, what is refused comes from the clients' start, when the queue rises
   * (0 to 4,823 a round in ten rounds).
   */
  sojournWindows: number;
}

export const LOAD_SHEDDING: Readonly<LoadShedderOptions> = Object.freeze({ targetLagMs: 75, lagWindows: 2, windowMs: 100, maxInFlight: 20_000, minShare: 0.05, floor: 32, targetSojournMs: 100, sojournWindows: 3 });

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
 * served with bounded latency instead of everything queueing until it times out. Three bounds:
 * - work in progress (`maxInFlight`): past it, new work is refused outright;
 * - saturation of this process, seen as event-loop delay above `targetLagMs` for `lagWindows`
 *   windows in a row while the units in progress grow or shrink;
 * - a standing queue anywhere behind it (the database, the node owning a chat, a machine whose
 *   cores are all busy while this process's own loop keeps up), seen as `sojournWindows` late
 *   windows in a row (see `targetSojournMs`) while the units in progress grow or shrink.
 * On either of the last two the share of new work taken shrinks by a quarter; in a window with
 * neither it grows back by a fiftieth of the whole (additive increase, multiplicative decrease),
 * never below `minShare`. The increase is slow because a cut shows in latency only after the
 * units in progress have ended: a faster one (a tenth per window) took the share back over what
 * the process could serve within a second, and latency swung with it. The share is applied
 * evenly (every n-th unit), not at random.
 */
export class LoadShedder {
  private share = 1;
  private credit = 0;
  private inFlight = 0;
  /** Units in flight per tenant (only tenants with some). */
  private readonly byTenant = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly lag: LagSource;
  /** Units served in this window, and how many of them took longer than the target. */
  private served = 0;
  /** Units taken in this window. */
  private began = 0;
  private late = 0;
  /** Late windows in a row (see targetSojournMs), the units served in them, and the units in progress before them. */
  private slowWindows = 0;
  /** Windows over the target delay in a row; since the last cut for it (or the streak's start): windows, units served, and the units in progress before them. */
  private lagWindows = 0;
  private lagSince = 0;
  private lagServed = 0;
  private lagFrom = 0;
  private slowServed = 0;
  private slowFrom = 0;
  /**
   * Units in progress on average over the last window, and what sums it: units in progress times
   * the time they were so, since `since`. An average, not a count at one instant: a group commit
   * ends hundreds of units at once, so a level closed loop counted at an instant swings by half.
   */
  private lastMean = 0;
  private area = 0;
  private since: number;
  private changed: number;

  constructor(
    private readonly options: Readonly<LoadShedderOptions> = LOAD_SHEDDING,
    lag?: LagSource,
    /** The clock sojourns are measured with, in ms (injectable for tests). */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.lag = lag ?? eventLoopLag();
    this.since = this.changed = now();
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

  /** Re-reads the delay and the window's sojourns, and adjusts the share (called every window; public for tests). */
  adjust(): void {
    const lag = this.lag.sample();
    const { served, late, began } = this;
    this.served = this.late = this.began = 0;
    if (served > 0) {
      if (2 * late <= served) this.slowWindows = 0;
      else {
        if (this.slowWindows === 0) {
          this.slowFrom = this.lastMean;
          this.slowServed = 0;
        }
        this.slowWindows++;
        this.slowServed += served;
      }
    }
    const t = this.now();
    this.count(t);
    const mean = t > this.since ? this.area / (t - this.since) : this.inFlight;
    const previousMean = this.lastMean;
    this.area = 0;
    this.since = t;
    this.lastMean = mean;
    // Moved since `from` by more than half a window's service over `windows` windows, and by more
    // than the floor (see sojournWindows). The first cut also needs the queue not to be draining
    // by itself: with everything taken, a window that ended more units than it took is a stall
    // letting go (a pause of the database or of the machine), not a standing queue. Once
    // shedding, a shrinking queue is cut too.
    const moving = (from: number, windows: number, servedSince: number): boolean => {
      const moved = Math.abs(mean - from);
      return moved > this.options.floor && 2 * moved * windows > servedSince && (began >= served || this.share < 1);
    };
    let queued = false;
    if (this.slowWindows >= this.options.sojournWindows) {
      queued = moving(this.slowFrom, this.slowWindows, this.slowServed);
      // A cut shows only in units taken after it, so the count starts over: the next cut for a
      // standing queue waits as many windows again, instead of cutting the units already late.
      // A level queue keeps its streak (and where it began), so slow growth adds up.
      if (queued) this.slowWindows = 0;
    }
    let saturated = false;
    if (lag > this.options.targetLagMs) {
      if (this.lagWindows === 0) {
        this.lagFrom = previousMean;
        this.lagSince = this.lagServed = 0;
      }
      this.lagWindows++;
      this.lagSince++;
      this.lagServed += served;
      saturated = this.lagWindows >= this.options.lagWindows && moving(this.lagFrom, this.lagSince, this.lagServed);
      // The movement is measured again from here: a queue that is level from now on is not cut again.
      if (saturated) {
        this.lagFrom = mean;
        this.lagSince = this.lagServed = 0;
      }
    } else this.lagWindows = 0;
    const over = saturated || queued;
    this.share = over ? Math.max(this.options.minShare, this.share * 0.75) : Math.min(1, this.share + 0.02);
  }

  /**
   * Takes one unit of work of `tenant` (if named), or refuses it (undefined). The returned function
   * ends it; call it exactly once, when the work is done, with `served` false when it was refused
   * or failed further on (its time then says nothing about queues, and is not counted).
   */
  begin(tenant?: string): ((served?: boolean) => void) | undefined {
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
    const began = this.now();
    this.count(began);
    this.inFlight++;
    this.began++;
    if (tenant !== undefined) this.byTenant.set(tenant, mine + 1);
    let done = false;
    return (served = true) => {
      if (done) return;
      done = true;
      const ended = this.now();
      this.count(ended);
      this.inFlight--;
      if (served) {
        this.served++;
        if (ended - began > this.options.targetSojournMs) this.late++;
      }
      if (tenant === undefined) return;
      const left = (this.byTenant.get(tenant) ?? 1) - 1;
      if (left <= 0) this.byTenant.delete(tenant);
      else this.byTenant.set(tenant, left);
    };
  }

  /** Adds the units in progress since the last change to the window's sum, at time `t`. */
  private count(t: number): void {
    this.area += this.inFlight * (t - this.changed);
    this.changed = t;
  }

  close(): void {
    clearInterval(this.timer);
    this.lag.close();
  }
}
