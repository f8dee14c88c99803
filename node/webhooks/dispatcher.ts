import { DELIVERY_TIMEOUT_MS, EventIds, type DeliveryResult } from '../../common/webhooks/index.ts';
import { DeliveryThread } from './delivery-thread.ts';
import type { Logger } from '../../common/index.ts';
import type { OutboxEvent, PendingEvent, WebhookOutbox } from '../store/index.ts';
import { anySubscribed, EndpointCache } from './endpoints.ts';
import { EndpointTask, endpointIn, FirstAttempts, NONE_DONE, wants } from './endpoint-tasks.ts';
import { Lane, type Task } from './lane.ts';
import { IN_MEMORY_EVENTS, OwnerQueue, type Tracked } from './owner-queue.ts';
import type { DeliveryRecord, HookEndpoint, WebhookSource } from './source.ts';
import { ConsumerJob, type OutboxConsumer } from './outbox-consumer.ts';

export interface DispatcherOptions {
  outbox: WebhookOutbox;
  /** This node's outbox (the store's writer id: where its message puts append). */
  owner: () => string;
  source: WebhookSource;
  endpoints: EndpointCache;
  /**
   * Whether this node delivers a dead owner's outbox: standalone, always; in a cluster, the one
   * live node the owner hashes to (every node agrees once the live list settles).
   */
  adopts: (owner: string) => boolean | Promise<boolean>;
  /** Whether the change a recovered event reports was written (OutboxEvent.check). */
  verify: (event: OutboxEvent) => Promise<boolean>;
  /** The application's endpoints changed here (a disable): drop cached copies everywhere. */
  changed: (appId: string) => void;
  allowInsecure: boolean;
  log: Logger;
  /** Other work riding the outbox (push): each takes the events of its own types. */
  consumers?: OutboxConsumer[];
  /** Requests in flight per endpoint from this node (and connections per receiving origin). */
  concurrency?: number;
  /** How often progress is written, and dead owners looked for (ms). */
  reportMs?: number;
  scanMs?: number;
}

/** Successful attempts logged per endpoint per second, at most (every failure is logged). */
const LOGGED_SUCCESSES_PER_SECOND = 10;
const MAX_LOG_BUFFER = 10_000;
/**
 * Deliveries a lane hands the delivery thread at once, per endpoint (the thread sends
 * `concurrency` of them at a time): the lane's own attempts, those of a failing endpoint (while
 * it answers, first attempts go to the thread without the lane: FirstAttempts). Under load this
 * thread's event loop answers late (a turn can take tens of ms), and a place in the window comes
 * back only once its answer is taken here: the window must cover that round trip at the rate the
 * thread sends, or it bounds the endpoint. At 256 it did (webhooks bench, when every delivery
 * went through a lane: 12,000-15,000 deliveries a second against 15,000-17,000 sends, the last
 * delivered up to 8 s after the run); at 1024 deliveries kept pace (the last within 50 ms).
 * Memory stays bounded by the events a node tracks (IN_MEMORY_EVENTS).
 */
const HANDED_OVER = 1024;

/** Event data already in JSON text (WebhookDispatcher.make). */
export class Raw {
  constructor(readonly json: string) {}
}

/** An endpoint's lane, its first attempts, and its application. */
interface LaneEntry {
  lane: Lane;
  first: FirstAttempts;
  appId: string;
}

/**
 * Delivers webhook events: this node's own, as their writes become durable, and those of dead
 * nodes it adopts, read from their outboxes. Each event goes to every active endpoint of its
 * application subscribed to its type, through that endpoint's lane (see lane.ts); it is finished
 * once every endpoint is done with it, and progress is written every `reportMs`. Delivery is at
 * least once: a crash, or two nodes adopting one outbox while the live list settles, resends what
 * was not recorded as finished (receivers deduplicate by `webhook-id`).
 */
export class WebhookDispatcher {
  readonly ids = new EventIds();
  private readonly queues = new Map<string, OwnerQueue>();
  private readonly lanes = new Map<string, LaneEntry>();
  private readonly thread: DeliveryThread;
  private log: DeliveryRecord[] = [];
  private readonly logged = new Map<string, { second: number; n: number }>();
  private readonly timers: NodeJS.Timeout[];
  private scanning = false;
  private isoMs = 0;
  private iso = '';
  private warnedAt = 0;
  private closed = false;

  constructor(private readonly o: DispatcherOptions) {
    this.thread = new DeliveryThread({ allowInsecure: o.allowInsecure, connections: o.concurrency ?? 8, inFlight: o.concurrency ?? 8 });
    const report = setInterval(() => void this.report(), o.reportMs ?? 1_000);
    const scan = setInterval(() => void this.scan(), o.scanMs ?? 5_000);
    report.unref();
    scan.unref();
    this.timers = [report, scan];
    queueMicrotask(() => void this.scan());
  }

  private selfQueue(): OwnerQueue {
    const owner = this.o.owner();
    let q = this.queues.get(owner);
    if (!q) this.queues.set(owner, (q = new OwnerQueue(owner, true, this.o.outbox, () => this.ids.floor())));
    return q;
  }

  /**
   * An event of this node, registered as being appended until `written` says how its write ended.
   * `data` may come as its JSON text already (`Raw`). The body is the JSON of a WebhookEnvelope,
   * put together as text: every message of an application with an endpoint makes one.
   */
  make(appId: string, type: string, data: unknown, check?: OutboxEvent['check']): OutboxEvent {
    const now = Date.now();
    const id = this.ids.next(now);
    if (now !== this.isoMs) {
      this.isoMs = now;
      this.iso = new Date(now).toISOString();
    }
    const json = data instanceof Raw ? data.json : JSON.stringify(data);
    // Ids and timestamps are made here of characters JSON never escapes.
    const body = `{"type":${JSON.stringify(type)},"id":"${id}","timestamp":"${this.iso}","appId":${JSON.stringify(appId)}${json === undefined ? '' : `,"data":${json}`}}`;
    this.selfQueue().appending.add(id);
    return check ? { id, appId, type, body, check } : { id, appId, type, body };
  }

  /** The write carrying `events` (made by `make`) resolved, or failed (then they are never sent). */
  written(events: OutboxEvent[], ok: boolean): void {
    const q = this.selfQueue();
    for (const e of events) q.appending.delete(e.id);
    if (!ok) return q.discard(events.map((e) => e.id));
    for (const e of events) {
      // Once events wait in the store, later ones wait there too until a refill has read them:
      // one tracked (and finished) meanwhile would be read back by the refill, which starts at
      // the first that waited, and sent twice (a finished event close above the mark may stay in
      // the store: WebhookOutbox.progress).
      if (q.unread || q.tracked.size >= IN_MEMORY_EVENTS) q.overflow(e.id);
      else this.track(q, e, NONE_DONE);
    }
  }

  /**
   * The events of a change about to be written with them (EventOptions), for the types an endpoint
   * of the application is subscribed to; hand them back with `written`. While the endpoints cannot
   * be read, every one is made (and whom it is for is found out at delivery), so the change neither
   * fails nor loses its events for it.
   */
  async prepare(appId: string, items: { type: string; data: unknown; check?: OutboxEvent['check'] }[]): Promise<OutboxEvent[]> {
    const endpoints = await Promise.resolve(this.o.endpoints.get(appId)).catch(() => undefined);
    if (endpoints && !endpoints.some((e) => e.status === 'ACTIVE')) return [];
    return items.filter((i) => !endpoints || anySubscribed(endpoints, i.type)).map((i) => this.make(appId, i.type, i.data, i.check));
  }

  /** Appends events of a change already made, then delivers them; resolves once they are durable. */
  async emit(appId: string, items: { type: string; data: unknown }[]): Promise<void> {
    const endpoints = await this.o.endpoints.get(appId);
    const wanted = items.filter((i) => anySubscribed(endpoints, i.type));
    if (wanted.length === 0) return;
    const events = wanted.map((i) => this.make(appId, i.type, i.data));
    try {
      await this.o.outbox.append(this.o.owner(), events);
    } catch (error) {
      this.written(events, false);
      throw error;
    }
    this.written(events, true);
  }

  private track(q: OwnerQueue, event: OutboxEvent, done: readonly string[]): void {
    const t: Tracked = { event, done, waiting: 0, queue: q, slot: 0 };
    q.tracked.add(t);
    this.dispatchSoon(t, 0);
  }

  /** Dispatches `t` now or after `delayMs`; while its endpoints cannot be read it is tried again, every 5 s. */
  private dispatchSoon(t: Tracked, delayMs: number): void {
    if (delayMs > 0) {
      setTimeout(() => this.dispatchSoon(t, 0), delayMs).unref();
      return;
    }
    if (this.o.consumers) {
      for (const c of this.o.consumers) {
        if (!c.takes(t.event)) continue;
        t.waiting = 1;
        return c.deliver(new ConsumerJob(t));
      }
    }
    const list = this.o.endpoints.get(t.event.appId);
    // Cached (as but once per cache period): no promise on the way of every event.
    if (!(list instanceof Promise)) return this.dispatch(t, list);
    list.then(
      (l) => this.dispatch(t, l),
      (error: unknown) => {
        if (Date.now() - this.warnedAt > 5_000) {
          this.warnedAt = Date.now();
          this.o.log.warn({ err: String(error), eventId: t.event.id }, 'cannot read webhook endpoints; their events are tried again every 5 s');
        }
        if (!this.closed && !t.queue.stopped) this.dispatchSoon(t, 5_000);
      },
    );
  }

  private dispatch(t: Tracked, list: HookEndpoint[]): void {
    let n = 0;
    for (const endpoint of list) if (wants(endpoint, t)) n++;
    if (n === 0) return t.queue.finish(t);
    // Counted before any lane has it: a lane may settle at once (closed, or the endpoint gone).
    t.waiting = n;
    for (const endpoint of list) {
      if (!wants(endpoint, t)) continue;
      const { lane, first } = this.lane(endpoint);
      if (lane.healthy) this.thread.submit(endpoint.id, endpoint.url, endpoint.secret, DELIVERY_TIMEOUT_MS, this.o.allowInsecure, t.event.id, t.event.body, first, t);
      else lane.push(new EndpointTask(t, endpoint.id));
    }
  }

  /**
   * The application's endpoints changed (NodeWebhooks.invalidate): the lanes of those deleted or
   * no longer active close, and what the delivery thread holds for them is dropped. (A lane finds
   * out by itself before each of its own attempts; first attempts are not the lane's.)
   */
  endpointsChanged(appId: string): void {
    // Read again only where this node delivers to the application.
    let delivering = false;
    for (const entry of this.lanes.values()) if (entry.appId === appId) delivering = true;
    if (!delivering) return;
    const closeGone = (list: HookEndpoint[]) => {
      for (const [id, entry] of this.lanes) {
        if (entry.appId !== appId || endpointIn(list, id)?.status === 'ACTIVE') continue;
        this.lanes.delete(id);
        entry.lane.close();
      }
    };
    const list = this.o.endpoints.get(appId);
    // Unreadable: the lanes find out at their next attempt, or at the next change.
    if (Array.isArray(list)) closeGone(list);
    else list.then(closeGone, () => {});
  }

  private lane(endpoint: HookEndpoint): LaneEntry {
    const entry = this.lanes.get(endpoint.id);
    if (entry && !entry.lane.closed) return entry;
    const { appId, id } = endpoint;
    const lane = new Lane(
      id,
      {
        current: () => {
          const list = this.o.endpoints.get(appId);
          return Array.isArray(list) ? endpointIn(list, id) : list.then((l) => endpointIn(l, id));
        },
        attempted: (task, result, attempt, nextRetryAt) => this.attempted(endpoint, task, result, attempt, nextRetryAt),
        disable: (e, reason) => void this.disable(e, reason),
        allowInsecure: this.o.allowInsecure,
        send: (req, done) => this.thread.send(id, req, done),
        cancel: () => this.thread.cancel(id),
        now: Date.now,
      },
      HANDED_OVER,
    );
    const first = new FirstAttempts(lane, endpoint, (e, event, statusCode, durationMs) => {
      if (this.successLogged(e.id)) this.record(e, event, { ok: true, statusCode, durationMs }, 1, undefined);
    });
    const made = { lane, first, appId };
    this.lanes.set(id, made);
    return made;
  }

  /** Whether a success at the endpoint is logged now: every failure is, successes up to a rate. */
  private successLogged(endpointId: string): boolean {
    const second = Math.floor(Date.now() / 1000);
    const seen = this.logged.get(endpointId);
    if (seen?.second === second && seen.n >= LOGGED_SUCCESSES_PER_SECOND) return false;
    if (seen?.second === second) seen.n++;
    else this.logged.set(endpointId, { second, n: 1 });
    return true;
  }

  private attempted(endpoint: HookEndpoint, task: Task, result: DeliveryResult, attempt: number, nextRetryAt: number | undefined): void {
    if (result.ok && !this.successLogged(endpoint.id)) return;
    this.record(endpoint, task.event, result, attempt, nextRetryAt);
  }

  private record(endpoint: HookEndpoint, event: OutboxEvent, result: DeliveryResult, attempt: number, nextRetryAt: number | undefined): void {
    if (this.log.length >= MAX_LOG_BUFFER) this.log.shift();
    this.log.push({
      id: crypto.randomUUID(),
      appId: endpoint.appId,
      endpointId: endpoint.id,
      eventId: event.id,
      type: event.type,
      attempt,
      status: result.ok ? 'succeeded' : 'failed',
      ...(result.statusCode !== undefined ? { statusCode: result.statusCode } : {}),
      durationMs: result.durationMs,
      ...(result.error ? { error: result.error } : {}),
      ...(nextRetryAt !== undefined ? { nextRetryAt: new Date(nextRetryAt).toISOString() } : {}),
      at: new Date().toISOString(),
      body: event.body,
    });
  }

  private async disable(endpoint: HookEndpoint, reason: string): Promise<void> {
    this.lanes.delete(endpoint.id);
    try {
      const current = await this.o.source.get(endpoint.appId, endpoint.id);
      if (current && current.status === 'ACTIVE') {
        await this.o.source.update({ ...current, status: 'DISABLED', disabledReason: reason, updatedAt: new Date().toISOString() });
        this.o.log.warn({ appId: endpoint.appId, webhookId: endpoint.id, reason }, 'webhook endpoint disabled');
      }
    } catch (error) {
      this.o.log.warn({ err: String(error), webhookId: endpoint.id }, 'cannot disable a webhook endpoint');
    }
    this.o.endpoints.invalidate(endpoint.appId);
    this.o.changed(endpoint.appId);
  }

  /** Writes progress and the delivery log; refills queues that overflowed. */
  async report(): Promise<void> {
    const log = this.log;
    this.log = [];
    if (log.length > 0) {
      await this.o.source.recordDeliveries(log).catch((error: unknown) => {
        this.o.log.warn({ err: String(error), records: log.length }, 'cannot write the webhook delivery log');
      });
    }
    for (const q of this.queues.values()) {
      await q.report().catch((error: unknown) => this.o.log.warn({ err: String(error), owner: q.owner }, 'cannot record webhook progress'));
      if (!q.stopped) await this.refill(q);
    }
  }

  private async refill(q: OwnerQueue): Promise<void> {
    let read: PendingEvent[];
    try {
      read = await q.refill();
    } catch (error) {
      return this.o.log.warn({ err: String(error), owner: q.owner }, 'cannot read a webhook outbox');
    }
    const checked = await Promise.all(read.map(async (p) => ({ p, ok: p.event.check === undefined || (await this.o.verify(p.event)) })));
    for (const { p, ok } of checked) {
      if (ok) this.track(q, p.event, p.done.length === 0 ? NONE_DONE : [...p.done]);
      else q.discard([p.event.id]);
    }
  }

  /** Looks for outboxes of dead owners to adopt, and lets go of those this node no longer adopts. */
  async scan(): Promise<void> {
    if (this.scanning || this.closed) return;
    this.scanning = true;
    try {
      const self = this.o.owner();
      for (const owner of await this.o.outbox.owners()) {
        if (owner === self || this.queues.has(owner)) continue;
        if (!(await this.o.adopts(owner))) continue;
        this.o.log.info({ owner }, 'adopting the webhook outbox of a node that is gone');
        const q = new OwnerQueue(owner, false, this.o.outbox, () => '');
        this.queues.set(owner, q);
        await this.refill(q);
      }
      for (const q of [...this.queues.values()]) {
        if (q.self) continue;
        if (!(await this.o.adopts(q.owner))) {
          q.stopped = true;
          this.queues.delete(q.owner);
        } else if (q.empty) {
          await q.report();
          this.queues.delete(q.owner);
          await this.o.outbox.retire(q.owner);
        }
      }
    } catch (error) {
      this.o.log.warn({ err: String(error) }, 'cannot look for webhook outboxes to adopt');
    } finally {
      this.scanning = false;
    }
  }

  /** Stops; progress so far is written (what is unfinished is resent by whoever adopts the outbox). */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    await this.report().catch(() => {});
    for (const { lane } of this.lanes.values()) lane.close();
    await this.thread.close();
  }
}
