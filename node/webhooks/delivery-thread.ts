import { Worker } from 'node:worker_threads';
import type { DeliveryRequest, DeliveryResult } from '../../common/webhooks/index.ts';

export interface AttemptRequest {
  n: number;
  /** The lane (endpoint) it belongs to: the thread sends at most `inFlight` of a lane's at a time. */
  lane: string;
  req: Omit<DeliveryRequest, 'agent' | 'readBody' | 'now'>;
}

/** What the node's thread tells the delivery thread. */
export type ThreadMessage = { batch: AttemptRequest[] } | { cancel: string } | 'close';

/** The error of a request the delivery thread dropped unsent (its lane was closed). */
export const CANCELLED = 'cancelled: the endpoint is no longer delivered to';

/**
 * Deliveries run on a thread of their own: signing, the HTTP exchange and its socket calls cost
 * the node's event loop (where chats' actors and sockets run) only the hand-off, one message per
 * turn for all the requests of that turn. The thread keeps each lane to `inFlight` requests at a
 * time and queues the rest (see delivery-worker.ts). Never rejects: a thread that failed answers
 * every request it held as a failed attempt (retried on the schedule) and is started again.
 */
export class DeliveryThread {
  private worker: Worker;
  private readonly waiting = new Map<number, (r: DeliveryResult) => void>();
  private next = 0;
  private queued: AttemptRequest[] = [];
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
    worker.on('message', (answers: { n: number; result: DeliveryResult }[]) => {
      for (const { n, result } of answers) {
        const resolve = this.waiting.get(n);
        this.waiting.delete(n);
        resolve?.(result);
      }
    });
    worker.on('error', (error) => this.failAll(`delivery thread failed: ${error.message}`));
    worker.on('exit', () => {
      this.failAll('delivery thread stopped');
      if (!this.closed) this.worker = this.start();
    });
    return worker;
  }

  private failAll(error: string): void {
    for (const resolve of this.waiting.values()) resolve({ ok: false, error, durationMs: 0 });
    this.waiting.clear();
  }

  deliver(lane: string, req: AttemptRequest['req']): Promise<DeliveryResult> {
    if (this.closed) return Promise.resolve({ ok: false, error: 'shutting down', durationMs: 0 });
    const n = this.next++;
    return new Promise((resolve) => {
      this.waiting.set(n, resolve);
      if (this.queued.length === 0) setImmediate(() => this.flush());
      this.queued.push({ n, lane, req });
    });
  }

  /** Drops the lane's requests not sent yet: each is answered as failed with CANCELLED. */
  cancel(lane: string): void {
    if (this.closed) return;
    this.flush();
    this.worker.postMessage({ cancel: lane } satisfies ThreadMessage);
  }

  private flush(): void {
    const batch = this.queued;
    this.queued = [];
    if (batch.length > 0) this.worker.postMessage({ batch } satisfies ThreadMessage);
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
