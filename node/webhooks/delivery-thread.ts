import { Worker } from 'node:worker_threads';
import type { DeliveryRequest, DeliveryResult } from '../../common/webhooks/index.ts';

/** A delivery as a lane hands it over: one signed POST of an event. */
export type AttemptRequest = Omit<DeliveryRequest, 'agent' | 'readBody' | 'now'>;

/**
 * Requests of one lane to one URL with one secret, in order: how requests cross to the thread.
 * Their ids and bodies go joined, with their lengths: the copy between threads costs per string
 * (160 requests of a 440-byte body: 180 ns a request joined, against 550 as strings of their own).
 */
export interface RequestGroup {
  lane: string;
  url: string;
  secret: string;
  timeoutMs: number;
  allowInsecure: boolean;
  n: number[];
  ids: string;
  idLengths: number[];
  bodies: string;
  bodyLengths: number[];
}

/** A group as it is filled, before its ids and bodies are joined. */
interface Filling extends Omit<RequestGroup, 'ids' | 'idLengths' | 'bodies' | 'bodyLengths'> {
  id: string[];
  body: string[];
}

/**
 * Answers the thread gathered (see delivery-worker.ts): successes as one column of numbers,
 * `[n, status, ms]` each (a typed array crosses threads as one copy of its bytes), failures one by
 * one.
 */
export interface Answers {
  ok: Float64Array;
  failed: { n: number; result: DeliveryResult }[];
}

/** What the node's thread tells the delivery thread. */
export type ThreadMessage = { groups: RequestGroup[] } | { cancel: string } | 'close';

/**
 * How long requests gather before they go to the delivery thread in one message: each message
 * costs both threads a turn, and one at the end of every turn of the node's busy loop would carry
 * only a few requests. The lanes' window (HANDED_OVER) covers the wait.
 */
const HAND_OVER_EVERY_MS = 2;

/**
 * How many nice levels the delivery thread runs below the node's own (Linux). Deliveries are
 * background work: what they have not sent waits in the outbox, and no send waits for them. So
 * while the node's event loop (acks, realtime frames) and the deliveries both want CPU, the
 * scheduler gives the event loop the larger share: 10 levels lower, a thread weighs about a ninth
 * of one at the node's level; on a core no one else wants it still runs at full speed.
 * `npm run bench -- webhooks` on 2 cores: sends with one endpoint 0.796× of none (mean of 7 runs,
 * 0.78–0.81), against 0.772× at the node's level (4 runs, alternating with the first ones), and a
 * p99 1.22–1.40× of none's, against 1.43–1.48×.
 */
export const DELIVERY_THREAD_NICE_STEP = 10;

/** The error of a request the delivery thread dropped unsent (its lane was closed). */
export const CANCELLED = 'cancelled: the endpoint is no longer delivered to';

/**
 * Deliveries run on a thread of their own: signing, the HTTP exchange and its socket calls cost
 * the node's event loop (where chats' actors and sockets run) only the hand-off, one message for
 * all the requests of HAND_OVER_EVERY_MS. The thread keeps each lane to `inFlight` requests at a
 * time and queues the rest (see delivery-worker.ts). Every request is answered once, through its
 * callback: a thread that failed answers every request it held as a failed attempt (retried on
 * the schedule) and is started again.
 */
export class DeliveryThread {
  private worker: Worker;
  private readonly waiting = new Map<number, (r: DeliveryResult) => void>();
  private next = 0;
  private groups: Filling[] = [];
  private last: Filling | undefined;
  private closed = false;

  constructor(private readonly options: { allowInsecure: boolean; connections: number; inFlight: number }) {
    this.worker = this.start();
  }

  private start(): Worker {
    // The service runs its TypeScript through tsx, whose loader is per thread: the worker registers
    // it before loading its module.
    const entry = new URL('./delivery-worker.ts', import.meta.url).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    const bootstrap = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
    const worker = new Worker(bootstrap, { eval: true, workerData: this.options });
    worker.unref();
    worker.on('message', (a: Answers) => this.answered(a));
    worker.on('error', (error) => this.failAll(`delivery thread failed: ${error.message}`));
    worker.on('exit', () => {
      this.failAll('delivery thread stopped');
      if (!this.closed) this.worker = this.start();
    });
    return worker;
  }

  private answered(a: Answers): void {
    for (let i = 0; i + 2 < a.ok.length; i += 3) this.take(a.ok[i]!)?.({ ok: true, statusCode: a.ok[i + 1]!, durationMs: a.ok[i + 2]! });
    for (const { n, result } of a.failed) this.take(n)?.(result);
  }

  private take(n: number): ((r: DeliveryResult) => void) | undefined {
    const done = this.waiting.get(n);
    this.waiting.delete(n);
    return done;
  }

  private failAll(error: string): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const done of waiting) done({ ok: false, error, durationMs: 0 });
  }

  /** Hands `req` over; `done` is called once with how it ended. */
  send(lane: string, req: AttemptRequest, done: (r: DeliveryResult) => void): void {
    if (this.closed) return done({ ok: false, error: 'shutting down', durationMs: 0 });
    const n = this.next++;
    this.waiting.set(n, done);
    if (this.groups.length === 0) setTimeout(() => this.flush(), HAND_OVER_EVERY_MS);
    let g = this.last;
    if (!g || g.lane !== lane || g.url !== req.url || g.secret !== req.secret || g.timeoutMs !== req.timeoutMs || g.allowInsecure !== req.allowInsecure) {
      g = { lane, url: req.url, secret: req.secret, timeoutMs: req.timeoutMs, allowInsecure: req.allowInsecure, n: [], id: [], body: [] };
      this.groups.push(g);
      this.last = g;
    }
    g.n.push(n);
    g.id.push(req.id);
    g.body.push(req.body);
  }

  /** Drops the lane's requests not sent yet: each is answered as failed with CANCELLED. */
  cancel(lane: string): void {
    if (this.closed) return;
    this.flush();
    this.worker.postMessage({ cancel: lane } satisfies ThreadMessage);
  }

  private flush(): void {
    const groups = this.groups;
    this.groups = [];
    this.last = undefined;
    if (groups.length === 0) return;
    const joined = groups.map(({ id, body, ...g }): RequestGroup => ({ ...g, ids: id.join(''), idLengths: id.map((s) => s.length), bodies: body.join(''), bodyLengths: body.map((s) => s.length) }));
    this.worker.postMessage({ groups: joined } satisfies ThreadMessage);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.flush();
    this.failAll('shutting down');
    this.worker.postMessage('close');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => void this.worker.terminate().then(() => resolve()), 2_000);
      this.worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
