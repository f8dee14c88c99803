import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../common/threads/index.ts';
import type { PushAddress } from '../store/index.ts';
import type { VapidKeys, WebPushMessage } from './web-push-request.ts';

/** One push handed to the thread. */
export interface WebPushJob {
  n: number;
  address: Extract<PushAddress, { kind: 'webPush' }>;
  vapid: VapidKeys;
  message: WebPushMessage;
}

/** How the thread's attempt ended: the push service's status (and body's start), or the error before one. */
export interface WebPushAnswer {
  n: number;
  status?: number;
  reason?: string;
  durationMs: number;
}

export interface WebPushThreadOptions {
  /** Let Web Push reach loopback and private addresses (PUSH_ALLOW_LOOPBACK). */
  allowLoopback: boolean;
  timeoutMs: number;
  /** Requests in flight at once; the rest wait in the thread (their timeout starts when sent). */
  inFlight: number;
}

/**
 * How many nice levels the Web Push thread runs below the node's own (Linux), as the webhooks'
 * delivery thread does (DELIVERY_THREAD_NICE_STEP): pushes are background work, what is not sent
 * yet waits in the outbox, and no send waits for it.
 */
export const WEB_PUSH_THREAD_NICE_STEP = 10;
/** How long jobs gather before they go to the thread, and answers before they come back. */
export const HAND_OVER_EVERY_MS = 2;

/** The compiled worker's file URL (bin/build-service.ts defines it); undefined when run from sources. */
declare const BUILT_WEB_PUSH_WORKER: string | undefined;

/**
 * Web Push runs on a thread of its own: each push's RFC 8291 encryption (a fresh ECDH key pair
 * and derivation, about 250 µs of CPU here) and its HTTPS exchange cost the node's event loop,
 * where chats' actors and sockets run, only the hand-off. Every job is answered once; a thread
 * that fails answers what it held as failed (retried with backoff) and is started again.
 */
export class WebPushThread {
  private worker: Worker;
  private readonly waiting = new Map<number, (a: WebPushAnswer) => void>();
  private batch: WebPushJob[] = [];
  private nextN = 0;
  private closed = false;

  constructor(private readonly options: WebPushThreadOptions) {
    this.worker = this.start();
  }

  send(job: Omit<WebPushJob, 'n'>): Promise<WebPushAnswer> {
    if (this.closed) return Promise.resolve({ n: -1, reason: 'the node is stopping', durationMs: 0 });
    const n = this.nextN++;
    return new Promise((resolve) => {
      this.waiting.set(n, resolve);
      if (this.batch.length === 0) setTimeout(() => this.handOver(), HAND_OVER_EVERY_MS).unref();
      this.batch.push({ n, ...job });
    });
  }

  private handOver(): void {
    const batch = this.batch;
    this.batch = [];
    if (batch.length > 0) this.worker.postMessage(batch);
  }

  private start(): Worker {
    const worker = startWorker(typeof BUILT_WEB_PUSH_WORKER === 'string' ? BUILT_WEB_PUSH_WORKER : undefined, new URL('./web-push-worker.ts', import.meta.url), this.options);
    worker.unref();
    worker.on('message', (answers: WebPushAnswer[]) => {
      for (const a of answers) {
        const resolve = this.waiting.get(a.n);
        this.waiting.delete(a.n);
        resolve?.(a);
      }
    });
    worker.on('error', (error) => this.failAll(`the Web Push thread failed: ${error.message}`));
    worker.on('exit', () => {
      this.failAll('the Web Push thread stopped');
      if (!this.closed) this.worker = this.start();
    });
    return worker;
  }

  private failAll(reason: string): void {
    const held = [...this.waiting.entries()];
    this.waiting.clear();
    for (const [n, resolve] of held) resolve({ n, reason, durationMs: 0 });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handOver();
    await this.worker.terminate();
  }
}
