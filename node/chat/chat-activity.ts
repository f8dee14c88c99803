/**
 * Writes a chat row's activity fields (last seq, last activity time) behind its messages: they
 * order chat lists, and a list read from the store takes the newest message's seq and time where
 * they are ahead, so they may trail. At most one write is in flight, and writes start at least
 * `intervalMs` apart however the changes are spaced (on Cassandra each is a compare-and-set, `IF
 * EXISTS`, so a deleted chat is not brought back); the latest state is always written eventually: a
 * failed write is tried again after the interval, until one succeeds or the writer stops.
 */
export class ChatActivity {
  private writing: Promise<void> | undefined;
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastStart = -Infinity;

  constructor(
    /** Writes the current state (read when it starts). */
    private readonly write: () => Promise<unknown>,
    private readonly intervalMs: number,
  ) {}

  /** The state changed: write it once nothing is in flight and the interval since the last write has passed. */
  touch(): void {
    this.dirty = true;
    if (this.writing || this.timer || this.stopped) return;
    this.schedule();
  }

  private schedule(): void {
    const wait = this.lastStart + this.intervalMs - performance.now();
    if (wait <= 0) return this.start();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.dirty && !this.stopped) this.start();
    }, Math.ceil(wait));
    this.timer.unref();
  }

  /** A write in flight, if any: another write of the same row must land after it. */
  inFlight(): Promise<void> {
    return this.writing ?? Promise.resolve();
  }

  /** Writes the latest state now (instead of when the timer fires) and waits for it. */
  async flush(): Promise<void> {
    await this.writing;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.dirty && !this.stopped) this.start();
    await this.writing;
  }

  /** No more writes (the chat was deleted). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private start(): void {
    this.dirty = false;
    this.lastStart = performance.now();
    // A failed write is tried again (after the interval): with no newer change to carry it, the
    // state it had would otherwise never be written.
    const written = this.write().then(
      () => undefined,
      () => {
        this.dirty = true;
      },
    );
    this.writing = written.then(() => {
      this.writing = undefined;
      if (this.dirty && !this.stopped) this.schedule();
    });
  }
}
