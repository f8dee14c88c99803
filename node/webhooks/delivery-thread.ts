import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../common/threads/index.ts';
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
  /** The number of the first request; the others follow it, one apart. */
  first: number;
  ids: string;
  idLengths: number[];
  bodies: string;
  bodyLengths: number[];
}

/**
 * Who hears how a request ended: one object for many requests (a `token` tells them apart), so
 * handing a request over allocates nothing of its own on the node's thread: every message of an
 * application with an endpoint makes one.
 */
export interface DeliverySink<T> {
  /** A 2xx came back. */
  delivered(token: T, statusCode: number, durationMs: number): void;
  /** It failed (or was never sent: cancelled, or the thread stopped). */
  failed(token: T, result: DeliveryResult): void;
}

/** `send`'s requests: the token is the callback. */
const CALLBACK_SINK: DeliverySink<(r: DeliveryResult) => void> = {
  delivered: (done, statusCode, durationMs) => done({ ok: true, statusCode, durationMs }),
  failed: (done, result) => done(result),
};

/**
 * A group as it is filled, then until every request in it is answered: its requests are numbered
 * `seq * GROUP_SIZE + i` (so an answer finds its request without a map entry of its own).
 */
interface Group extends Omit<RequestGroup, 'first' | 'ids' | 'idLengths' | 'bodies' | 'bodyLengths'> {
  seq: number;
  id: string[];
  body: string[];
  /** Each request's sink and token, until it is answered. */
  sinks: (DeliverySink<unknown> | undefined)[];
  tokens: unknown[];
  /** Requests not answered yet. */
  left: number;
}

/** Requests in one group at most (a group is one lane's requests of one hand-over). */
const GROUP_SIZE = 65_536;

/**
 * The compiled worker's file URL, which bin/build-service.ts defines in the compiled service (the
 * worker then starts without tsx); undefined when the service runs from its sources.
 */
declare const BUILT_DELIVERY_WORKER: string | undefined;

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
 * sink (or callback): a thread that failed answers every request it held as a failed attempt (retried on
 * the schedule) and is started again.
 */
export class DeliveryThread {
  private worker: Worker;
  /** Groups handed over with requests not answered yet, by seq. */
  private readonly waiting = new Map<number, Group>();
  private nextSeq = 0;
  private groups: Group[] = [];
  private last: Group | undefined;
  /** The group the last answer was for: answers come mostly in order, a group's together. */
  private answering: Group | undefined;
  private closed = false;

  constructor(private readonly options: { allowInsecure: boolean; connections: number; inFlight: number }) {
    this.worker = this.start();
  }

  private start(): Worker {
    const worker = startWorker(typeof BUILT_DELIVERY_WORKER === 'string' ? BUILT_DELIVERY_WORKER : undefined, new URL('./delivery-worker.ts', import.meta.url), this.options);
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
    for (let i = 0; i + 2 < a.ok.length; i += 3) this.answer(a.ok[i]!, a.ok[i + 1]!, a.ok[i + 2]!, undefined);
    for (const { n, result } of a.failed) this.answer(n, 0, 0, result);
  }

  /**
   * Tells request `n`'s sink how it ended (a 2xx when `failure` is undefined) and forgets it
   * here: each request is answered once.
   */
  private answer(n: number, statusCode: number, durationMs: number, failure: DeliveryResult | undefined): void {
    const seq = Math.floor(n / GROUP_SIZE);
    const i = n - seq * GROUP_SIZE;
    let g = this.answering;
    if (g?.seq !== seq) this.answering = g = this.waiting.get(seq);
    const sink = g?.sinks[i];
    if (!g || !sink) return;
    const token = g.tokens[i];
    g.sinks[i] = undefined;
    g.tokens[i] = undefined;
    if (--g.left === 0) {
      this.waiting.delete(seq);
      this.answering = undefined;
    }
    if (failure) sink.failed(token, failure);
    else sink.delivered(token, statusCode, durationMs);
  }

  private failAll(error: string): void {
    const groups = [...this.waiting.values()];
    this.waiting.clear();
    this.answering = undefined;
    for (const g of groups) {
      for (let i = 0; i < g.sinks.length; i++) g.sinks[i]?.failed(g.tokens[i], { ok: false, error, durationMs: 0 });
    }
  }

  /** Hands `req` over; `done` is called once with how it ended. */
  send(lane: string, req: AttemptRequest, done: (r: DeliveryResult) => void): void {
    this.submit(lane, req.url, req.secret, req.timeoutMs, req.allowInsecure, req.id, req.body, CALLBACK_SINK, done);
  }

  /**
   * Hands over one request: a POST of `body` as event `id`; `sink` is told once how it ended,
   * with `token`. What `send` does, without an object made for the request: the dispatcher's
   * first attempts of every event come this way.
   */
  submit<T>(lane: string, url: string, secret: string, timeoutMs: number, allowInsecure: boolean, id: string, body: string, sink: DeliverySink<T>, token: T): void {
    if (this.closed) return sink.failed(token, { ok: false, error: 'shutting down', durationMs: 0 });
    if (this.groups.length === 0) setTimeout(() => this.flush(), HAND_OVER_EVERY_MS);
    let g = this.last;
    if (!g || g.lane !== lane || g.url !== url || g.secret !== secret || g.timeoutMs !== timeoutMs || g.allowInsecure !== allowInsecure || g.id.length === GROUP_SIZE) {
      g = { seq: this.nextSeq++, lane, url, secret, timeoutMs, allowInsecure, id: [], body: [], sinks: [], tokens: [], left: 0 };
      this.groups.push(g);
      this.last = g;
    }
    g.id.push(id);
    g.body.push(body);
    g.sinks.push(sink);
    g.tokens.push(token);
    g.left++;
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
    const joined: RequestGroup[] = [];
    for (const g of groups) {
      this.waiting.set(g.seq, g);
      const idLengths: number[] = [];
      const bodyLengths: number[] = [];
      for (let i = 0; i < g.id.length; i++) {
        idLengths.push(g.id[i]!.length);
        bodyLengths.push(g.body[i]!.length);
      }
      joined.push({
        lane: g.lane,
        url: g.url,
        secret: g.secret,
        timeoutMs: g.timeoutMs,
        allowInsecure: g.allowInsecure,
        first: g.seq * GROUP_SIZE,
        ids: g.id.join(''),
        idLengths,
        bodies: g.body.join(''),
        bodyLengths,
      });
      // Sent: the thread has them now, and only the sinks and tokens are needed here.
      g.id = [];
      g.body = [];
    }
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
