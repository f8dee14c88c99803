import { DELIVERY_TIMEOUT_MS, eventTime, RETRY_SCHEDULE, retryDelay, type DeliveryRequest, type DeliveryResult } from '../../common/webhooks/index.ts';
import type { OutboxEvent } from '../store/index.ts';
import type { HookEndpoint } from './source.ts';


/** An event's delivery to one endpoint, and how it ends. */
export interface Task {
  event: OutboxEvent;
  /** Failed attempts so far. */
  failures: number;
  /** Called once: the endpoint is done with the event (delivered, given up, or the endpoint is gone). */
  settle: (outcome: 'delivered' | 'given-up' | 'dropped') => void;
  /** False once the event's outbox is no longer dispatched here (another node took it over). */
  live: () => boolean;
}

export interface LaneHooks {
  /** The endpoint as it is now (undefined: deleted), read before each attempt. */
  current: () => HookEndpoint | undefined | Promise<HookEndpoint | undefined>;
  /** Every attempt, for the delivery log. */
  attempted: (task: Task, result: DeliveryResult, attempt: number, nextRetryAt: number | undefined) => void;
  /** The endpoint must be disabled (410 Gone, or failing for 24 h). */
  disable: (endpoint: HookEndpoint, reason: string) => void;
  allowInsecure: boolean;
  /** One signed POST (the delivery thread's, which may hold it until the lane's turn); `done` is called once. */
  send: (req: Omit<DeliveryRequest, 'agent' | 'readBody' | 'now'>, done: (result: DeliveryResult) => void) => void;
  /** The lane closed: requests handed over and not sent yet are dropped (answered CANCELLED). */
  cancel: () => void;
  now: () => number;
}

/**
 * The deliveries to one endpoint from this node: at most `concurrency` requests handed to `send`
 * at a time (the delivery thread, which sends fewer at once and queues the rest: a window of
 * requests there keeps the endpoint's connections busy however late this thread's event loop
 * answers), the rest waiting in arrival order, failed ones coming back after their retry delay. A
 * slow or dead receiver fills its own lane only: other endpoints' lanes, and sends, never wait.
 */
export class Lane {
  private ready: Task[] = [];
  private head = 0;
  private active = 0;
  private readonly timers = new Map<NodeJS.Timeout, Task>();
  /** When the current run of failures began (none while the endpoint answers). */
  private failingSince: number | undefined;
  private pumping = false;
  closed = false;

  constructor(
    readonly endpointId: string,
    private readonly hooks: LaneHooks,
    private readonly concurrency: number,
    /** How long a task waits when its endpoint cannot be read (the control store is away). */
    private readonly unreadableRetryMs = 5_000,
  ) {}

  get idle(): boolean {
    return this.active === 0 && this.head >= this.ready.length && this.timers.size === 0;
  }

  /**
   * Open, and its endpoint not failing: a first attempt may then go to the delivery thread
   * straight away, without this lane's window (the thread holds what it cannot send yet). While
   * the endpoint fails, new events wait their turn here instead, behind the retries.
   */
  get healthy(): boolean {
    return !this.closed && this.failingSince === undefined;
  }

  /** An attempt made without this lane (see `healthy`) succeeded: the endpoint answers. */
  delivered(): void {
    this.failingSince = undefined;
  }

  push(task: Task): void {
    if (this.closed) return task.settle('dropped');
    this.ready.push(task);
    this.pump();
  }

  private pump(): void {
    // A task can end at once (dropped): the loop below goes on with the next, rather than a call
    // from its end recursing here once per task.
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.active < this.concurrency && this.head < this.ready.length) {
        const task = this.ready[this.head++]!;
        if (this.head > 1024 && this.head * 2 > this.ready.length) {
          this.ready = this.ready.slice(this.head);
          this.head = 0;
        }
        if (!task.live()) continue;
        this.active++;
        this.run(task);
      }
    } finally {
      // Whatever a hook threw, the lane pumps again on the next push or answer.
      this.pumping = false;
    }
  }

  /** A task's attempt ended (or never began): its place goes to the next. */
  private ended(): void {
    this.active--;
    this.pump();
  }

  /**
   * One attempt of `task`, without a promise on the way when the endpoint is cached (as it is
   * but once per cache period): every event of every endpoint passes here.
   */
  private run(task: Task): void {
    let current: ReturnType<LaneHooks['current']>;
    try {
      current = this.hooks.current();
    } catch (error) {
      current = Promise.reject(error);
    }
    if (!(current instanceof Promise)) return this.attempt(task, current);
    current.then(
      (endpoint) => this.attempt(task, endpoint),
      () => {
        // The endpoint cannot be read: the task waits its turn again, later (no attempt made).
        this.later(task, this.unreadableRetryMs);
        this.ended();
      },
    );
  }

  private attempt(task: Task, endpoint: HookEndpoint | undefined): void {
    if (!endpoint || endpoint.status !== 'ACTIVE') {
      // Deleted or disabled: what waits here, and what the delivery thread holds, goes too.
      task.settle('dropped');
      this.close();
      return this.ended();
    }
    if (!endpoint.events.includes(task.event.type)) {
      task.settle('dropped');
      return this.ended();
    }
    const req = { url: endpoint.url, secret: endpoint.secret, id: task.event.id, body: task.event.body, timeoutMs: DELIVERY_TIMEOUT_MS, allowInsecure: this.hooks.allowInsecure };
    this.hooks.send(req, (result) => {
      this.answered(task, endpoint, result);
      this.ended();
    });
  }

  /**
   * How an attempt of `task` ended: the lane's own, or one made without it (a first attempt of
   * a healthy lane), which from a failure on is the lane's to retry.
   */
  answered(task: Task, endpoint: HookEndpoint, result: DeliveryResult): void {
    // Dropped unsent, or failed after the lane closed (disabled): nothing to log or retry.
    if (this.closed && !result.ok) return task.settle('dropped');
    const now = this.hooks.now();
    const attempt = task.failures + 1;
    if (result.ok) {
      this.failingSince = undefined;
      this.hooks.attempted(task, result, attempt, undefined);
      return task.settle('delivered');
    }
    task.failures++;
    this.failingSince ??= now;
    if (result.statusCode === 410) {
      this.hooks.attempted(task, result, attempt, undefined);
      task.settle('dropped');
      return this.stop(endpoint, 'the receiver answered 410 Gone');
    }
    const delay = retryDelay(task.failures);
    if (now + delay - eventTime(task.event.id) > RETRY_SCHEDULE.giveUpMs) {
      this.hooks.attempted(task, result, attempt, undefined);
      task.settle('given-up');
    } else {
      this.hooks.attempted(task, result, attempt, now + delay);
      this.later(task, delay);
    }
    if (now - this.failingSince >= RETRY_SCHEDULE.giveUpMs) this.stop(endpoint, 'no delivery succeeded for 24 hours');
  }

  /** `task` joins the lane again after `delayMs` (dropped with the rest if the lane closes first). */
  private later(task: Task, delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.push(task);
    }, delayMs);
    timer.unref();
    this.timers.set(timer, task);
  }

  /** Disables the endpoint: what waits for it is dropped. */
  private stop(endpoint: HookEndpoint, reason: string): void {
    if (this.closed) return;
    this.hooks.disable(endpoint, reason);
    this.close();
  }

  /** Drops every waiting task (each settled 'dropped'); later pushes are dropped at once. */
  close(): void {
    if (!this.closed) this.hooks.cancel();
    this.closed = true;
    const waiting = [...this.ready.slice(this.head), ...this.timers.values()];
    for (const timer of this.timers.keys()) clearTimeout(timer);
    this.timers.clear();
    this.ready = [];
    this.head = 0;
    for (const task of waiting) task.settle('dropped');
  }
}
