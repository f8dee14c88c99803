import type { IncomingHttpHeaders } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import type { DeliveryRequest, DeliveryResult } from './deliver.ts';
import { signatureHeaders } from './sign.ts';
import { guardedLookup } from './urls.ts';

/** At most this much of a receiver's answer is read, and then thrown away. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Keep-alive connections for a node's deliveries (undici: far less CPU per request than
 * node:http, which matters when every message makes a request). Every new connection resolves its
 * host through the same guard as single deliveries: public addresses only, unless
 * `allowInsecure`. At most `connections` per origin.
 */
export function deliveryPool(allowInsecure: boolean, connections: number): Agent {
  return new Agent({ connections, pipelining: 1, keepAliveTimeout: 30_000, connect: { lookup: guardedLookup(allowInsecure) as never } });
}

/** Parsed endpoint URLs: an endpoint's every delivery posts to the same one (bounded). */
const parsed = new Map<string, { origin: string; path: string }>();

function target(url: string): { origin: string; path: string } | undefined {
  let t = parsed.get(url);
  if (t) return t;
  try {
    const u = new URL(url);
    t = { origin: u.origin, path: `${u.pathname}${u.search}` };
  } catch {
    return undefined;
  }
  if (parsed.size >= 1000) parsed.clear();
  parsed.set(url, t);
  return t;
}

/**
 * One exchange, as undici's dispatcher reports it. It settles once: on the answer's end, on an
 * error, at the timeout (which aborts the exchange, even one still waiting for a connection), or
 * once the answer passes MAX_ANSWER_BYTES (then by its status, the rest unread, as undici's own
 * `dump`). A handler of undici's dispatcher rather than `request()` with an abort signal and a URL
 * parsed per call: with a timeout on every delivery it costs what a bare `request()` without one
 * does (bench/micro/webhook-delivery.ts: 36 µs of CPU a delivery against 39 for `request()`, and
 * 47 for the signal-and-URL version this replaces, means of five rounds on loopback).
 */
class Exchange implements Dispatcher.DispatchHandler {
  private status = 0;
  private read = 0;
  private settled = false;
  private timedOut = false;
  private controller: Dispatcher.DispatchController | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly started = performance.now();

  constructor(
    timeoutMs: number,
    private readonly resolve: (result: DeliveryResult) => void,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.finish({ ok: false, error: `no answer within ${timeoutMs} ms` });
      this.controller?.abort(new Error('timeout'));
    }, timeoutMs);
  }

  private finish(result: Omit<DeliveryResult, 'durationMs'>): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve({ ...result, durationMs: Math.round(performance.now() - this.started) });
  }

  private byStatus(): void {
    const status = this.status;
    this.finish(status >= 200 && status < 300 ? { ok: true, statusCode: status } : { ok: false, statusCode: status, error: `HTTP ${status}` });
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Timed out while waiting for a connection: never sent.
    if (this.timedOut) controller.abort(new Error('timeout'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, _headers: IncomingHttpHeaders): void {
    // 1xx answers come before the final one, which overwrites them.
    this.status = statusCode;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.read += chunk.length;
    if (this.read <= MAX_ANSWER_BYTES) return;
    this.byStatus();
    controller.abort(new Error('answer too long'));
  }

  onResponseEnd(): void {
    this.byStatus();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const e = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    const cause = e.cause ?? e;
    if (cause.code === 'WEBHOOK_ADDRESS_REFUSED') return this.finish({ ok: false, error: cause.message });
    this.finish({ ok: false, error: `${cause.code ?? e.code ?? 'error'}: ${cause.message ?? e.message}` });
  }
}

/**
 * One signed POST over `pool`, with the guarantees of `deliver()`: never throws, no redirects
 * followed, a 2xx within `timeoutMs` is success, at most 64 KiB of the answer is read.
 */
export function deliverPooled(pool: Dispatcher, req: Omit<DeliveryRequest, 'agent' | 'readBody'>): Promise<DeliveryResult> {
  const to = target(req.url);
  if (!to) return Promise.resolve({ ok: false, error: 'invalid URL', durationMs: 0 });
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'chat-service-webhooks/1',
    ...signatureHeaders(req.secret, req.id, (req.now ?? (() => new Date()))(), req.body),
  };
  return new Promise((resolve) => {
    const exchange = new Exchange(req.timeoutMs, resolve);
    try {
      pool.dispatch({ origin: to.origin, path: to.path, method: 'POST', headers, body: req.body }, exchange);
    } catch (error) {
      exchange.onResponseError(undefined as never, error as Error);
    }
  });
}
