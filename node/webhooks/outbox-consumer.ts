import type { ChangeEventItem, MessageWrite } from '../chat/index.ts';
import type { OutboxEvent } from '../store/index.ts';
import type { Tracked } from './owner-queue.ts';

/** Makes an outbox event of this node (WebhookDispatcher.make): `json` is the event's data as JSON text. */
export type MakeEvent = (appId: string, type: string, json: string, check: OutboxEvent['check']) => OutboxEvent;

/**
 * Work other than webhook endpoints that rides the webhook outbox (push notifications, file deletions): its events
 * are made with the message writes they follow and are durable with them, and the dispatcher hands
 * each to it, from this node's writes and from the outboxes it adopts, until it finishes them. Its
 * event types are its own (no endpoint can subscribe to them), so endpoints never see them.
 */
export interface OutboxConsumer {
  /** Whether `event` is this consumer's (by its type). */
  takes(event: OutboxEvent): boolean;
  /** The events it adds for a batch of message writes (none when the application does not use it). */
  messageEvents(appId: string, writes: readonly MessageWrite[], make: MakeEvent): OutboxEvent[] | Promise<OutboxEvent[]>;
  /** The events it adds for a chat, member or user change (each item carries its check). */
  changeEvents?(appId: string, items: readonly ChangeEventItem[], make: MakeEvent): OutboxEvent[];
  /** Delivers an event; it calls `job.finish()` once, when nothing of it is left to do. */
  deliver(job: ConsumerJob): void;
}

/**
 * An event handed to a consumer: what is done of it already (marks recorded before a crash or a
 * handover), and how the consumer records more. Marks are written with the outbox's progress
 * (every second), so after a crash at most the last second's work is done again.
 */
export class ConsumerJob {
  constructor(private readonly t: Tracked) {}

  get event(): OutboxEvent {
    return this.t.event;
  }

  /** Marks recorded so far (the consumer's own strings, e.g. the devices already pushed to). */
  get done(): readonly string[] {
    return this.t.done;
  }

  /** Records that `mark` is done (the list is replaced, never pushed to: see NONE_DONE). */
  mark(mark: string): void {
    this.t.done = [...this.t.done, mark];
    this.t.queue.progressed(this.t);
  }

  /** Nothing of the event is left to do: it is finished. */
  finish(): void {
    this.t.queue.finish(this.t);
  }

  /** False once the event's outbox is no longer dispatched here (another node took it over, or this one closed). */
  live(): boolean {
    return !this.t.queue.stopped;
  }
}

/**
 * The timers a consumer waits on between attempts (unref'd: they never hold the process open),
 * all cleared when it stops; nothing is scheduled after that. What waited stays unfinished in the
 * outbox, for the next run or the node that adopts it.
 */
export class RetryTimers {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  get closed(): boolean {
    return this.stopped;
  }

  /** Runs `fn` after `ms` unless stopped first. */
  later(fn: () => void, ms: number): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, Math.max(0, ms));
    timer.unref();
    this.timers.add(timer);
  }

  close(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
