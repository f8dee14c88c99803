import { justAfter } from '../../common/webhooks/index.ts';
import type { OutboxEvent, PendingEvent, WebhookOutbox } from '../store/index.ts';
import { TrackedEvents } from './tracked-events.ts';

/** An outbox event being delivered: the endpoints done with it, and how many still work on it. */
export interface Tracked {
  event: OutboxEvent;
  /** Ids of the endpoints done with it (at most a handful); replaced, never pushed to. */
  done: readonly string[];
  waiting: number;
  queue: OwnerQueue;
  /** Where the queue's TrackedEvents keeps it. */
  slot: number;
}

/** Events of one owner tracked in memory at most; the rest wait in the store until there is room. */
export const IN_MEMORY_EVENTS = 10_000;

/**
 * What a dispatcher knows of one owner's outbox (its own, or one it adopted): the events it
 * tracks, those being appended, and what it has finished since its last report to the store.
 *
 * The low-water mark it reports is below every event it has not finished: those it tracks, those
 * being appended (their ids are registered before their write starts), and those it has not read
 * from the store yet (`unreadFrom`). So a crash at any point leaves every unfinished event at or
 * above the stored mark, where a recovery reads.
 */
export class OwnerQueue {
  readonly tracked = new TrackedEvents<Tracked>();
  /** Ids of events made and not yet written (each id is made once). */
  readonly appending = new Set<string>();
  private finished: string[] = [];
  private readonly partial = new Set<Tracked>();
  /** The lowest id that may be in the store unread (undefined: none). */
  unreadFrom: string | undefined;
  /** Whether the store may hold events this queue has not read (set at adoption and on overflow). */
  unread: boolean;
  stopped = false;
  private reporting: Promise<void> = Promise.resolve();

  constructor(
    readonly owner: string,
    readonly self: boolean,
    private readonly outbox: WebhookOutbox,
    private readonly floor: () => string,
  ) {
    this.unread = !self;
  }

  finish(t: Tracked): void {
    if (!this.tracked.remove(t)) return;
    if (this.partial.size > 0) this.partial.delete(t);
    this.finished.push(t.event.id);
  }

  /** Discards events whose write failed (never tracked). */
  discard(ids: string[]): void {
    this.finished.push(...ids);
  }

  progressed(t: Tracked): void {
    this.partial.add(t);
  }

  /** Notes an event that could not be tracked (no room): it waits in the store. */
  overflow(id: string): void {
    this.unread = true;
    if (this.unreadFrom === undefined || id < this.unreadFrom) this.unreadFrom = id;
  }

  private low(): string | undefined {
    let low: string | undefined = this.unreadFrom;
    for (const { event } of this.tracked.values()) if (low === undefined || event.id < low) low = event.id;
    for (const id of this.appending) if (low === undefined || id < low) low = id;
    if (low !== undefined) return low;
    return this.self ? this.floor() : undefined;
  }

  /** Writes what was finished since the last report, one report at a time. */
  report(): Promise<void> {
    this.reporting = this.reporting.then(async () => {
      const finished = this.finished;
      const partial = [...this.partial].map((t): PendingEvent => ({ event: t.event, done: [...t.done] }));
      const low = this.low();
      // The mark matters only once events finish: an idle queue writes nothing.
      if (finished.length === 0 && partial.length === 0) return;
      this.finished = [];
      this.partial.clear();
      try {
        await this.outbox.progress(this.owner, finished, partial, low);
      } catch (error) {
        // Kept for the next report: progress only ever moves forward.
        this.finished.push(...finished);
        throw error;
      }
    });
    return this.reporting;
  }

  /** Reads events waiting in the store, up to the room left; resolves with those not tracked yet. */
  async refill(): Promise<PendingEvent[]> {
    const room = IN_MEMORY_EVENTS - this.tracked.size;
    if (!this.unread || room < IN_MEMORY_EVENTS / 2) return [];
    await this.report();
    const from = this.unreadFrom;
    this.unreadFrom = undefined;
    this.unread = false;
    const read = await this.outbox.pending(this.owner, from, room).catch((error: unknown) => {
      this.unread = true;
      this.unreadFrom = from;
      throw error;
    });
    if (read.length >= room) this.overflow(justAfter(read.at(-1)!.event.id));
    const tracked = this.tracked.ids();
    return read.filter((p) => !tracked.has(p.event.id));
  }

  /** Whether nothing is left: nothing tracked, appending or unread. */
  get empty(): boolean {
    return this.tracked.size === 0 && this.appending.size === 0 && !this.unread;
  }
}
