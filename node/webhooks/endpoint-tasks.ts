import type { DeliveryResult } from '../../common/webhooks/index.ts';
import type { OutboxEvent } from '../store/index.ts';
import type { DeliverySink } from './delivery-thread.ts';
import type { Lane, Task } from './lane.ts';
import type { Tracked } from './owner-queue.ts';
import type { HookEndpoint } from './source.ts';

// How an event the dispatcher tracks reaches each of its endpoints: as a lane's task, or as a
// first attempt made without the lane (see WebhookDispatcher.dispatch).

/**
 * The done list of an event no endpoint is done with yet: shared, never written to (a Tracked's
 * list is replaced, not pushed to), so tracking an event allocates no list.
 */
export const NONE_DONE: readonly string[] = Object.freeze([]);

/** The endpoint `id` of `list`: a loop, not `find` with a closure made per call (once per attempt). */
export function endpointIn(list: HookEndpoint[], id: string): HookEndpoint | undefined {
  for (const e of list) if (e.id === id) return e;
  return undefined;
}

/** Whether `e` is to get `t` (active, subscribed, and not done with it yet). */
export function wants(e: HookEndpoint, t: Tracked): boolean {
  return e.status === 'ACTIVE' && e.events.includes(t.event.type) && !t.done.includes(e.id);
}

/**
 * Endpoint `endpointId` is done with `t`: once every endpoint is, its queue finishes it.
 * `t.done` is copied, not pushed to: every event starts with the one shared empty list
 * (NONE_DONE), and only an event some endpoints are still working on needs a list of its own.
 */
function settle(t: Tracked, endpointId: string): void {
  if (--t.waiting === 0) return t.queue.finish(t);
  t.done = [...t.done, endpointId];
  t.queue.progressed(t);
}

/**
 * An event's delivery to one endpoint (a lane's Task): when every endpoint of the event is done
 * with it, its queue finishes it. A class, not closures: one is made per event and endpoint that
 * a lane handles (see FirstAttempts).
 */
export class EndpointTask implements Task {
  failures = 0;
  readonly event: OutboxEvent;

  constructor(
    private readonly t: Tracked,
    private readonly endpointId: string,
  ) {
    this.event = t.event;
  }

  live(): boolean {
    return !this.t.queue.stopped;
  }

  settle(): void {
    settle(this.t, this.endpointId);
  }
}

/**
 * The first attempts at an endpoint while its lane is healthy (Lane.healthy): handed to the
 * delivery thread as the events come, one sink per endpoint, with no task, request or callback
 * made per event (every message of an application with an endpoint makes one). In profiles of
 * the webhooks bench, taking the thread's answers cost the node's thread 1.3 µs a send through
 * the lanes, 0.7 this way. The thread holds what it cannot send yet, at most `inFlight` at a time
 * per endpoint. A success settles the event; a failure makes it a task of the lane, retried on
 * the schedule like the lane's own.
 */
export class FirstAttempts implements DeliverySink<Tracked> {
  constructor(
    private readonly lane: Lane,
    private readonly endpoint: HookEndpoint,
    private readonly logSuccess: (endpoint: HookEndpoint, event: OutboxEvent, statusCode: number, durationMs: number) => void,
  ) {}

  delivered(t: Tracked, statusCode: number, durationMs: number): void {
    this.lane.delivered();
    this.logSuccess(this.endpoint, t.event, statusCode, durationMs);
    settle(t, this.endpoint.id);
  }

  failed(t: Tracked, result: DeliveryResult): void {
    this.lane.answered(new EndpointTask(t, this.endpoint.id), this.endpoint, result);
  }
}
