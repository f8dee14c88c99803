import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { signatureHeaders } from './sign.ts';
import { guardedLookup } from './urls.ts';

export interface DeliveryRequest {
  url: string;
  secret: string;
  /** The event id: the `webhook-id` header, the same on every retry of the event. */
  id: string;
  body: string;
  /** A 2xx within this is success (10 s for events). */
  timeoutMs: number;
  allowInsecure: boolean;
  now?: () => Date;
  /** Keep-alive connections to reuse (a dispatcher's); a connection of its own per request without. */
  agent?: import('node:http').Agent;
  /** Keep the receiver's answer in the result (`body`); an answer over MAX_RESPONSE_BYTES is then a failure. */
  readBody?: boolean;
}

export interface DeliveryResult {
  ok: boolean;
  /** The HTTP status, when the receiver answered. */
  statusCode?: number;
  durationMs: number;
  /** Why it failed, in words, when it did. */
  error?: string;
  /** With `readBody`: the answer's content as UTF-8 text (at most MAX_RESPONSE_BYTES). */
  body?: string;
}

/** A 2xx within this is a delivered event (README, "Webhooks"): for the nodes' deliveries and the control service's tests and retries alike. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** At most this much of a receiver's answer is read (and then thrown away, unless `readBody`). */
export const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * One signed POST of an event to an endpoint. Never throws: every outcome is a result. Redirects
 * are not followed (a 3xx is a failure), the host must resolve to public addresses only (unless
 * `allowInsecure`), and the whole exchange is bounded by `timeoutMs`.
 */
export function deliver(req: DeliveryRequest): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<DeliveryResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return finish({ ok: false, error: 'invalid URL' });
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'chat-service-webhooks/1',
      ...signatureHeaders(req.secret, req.id, (req.now ?? (() => new Date()))(), req.body),
    };
    const outgoing = send(url, { method: 'POST', headers, lookup: guardedLookup(req.allowInsecure) as never, agent: req.agent ?? false }, (res) => {
      let read = 0;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) res.destroy();
        else if (req.readBody) chunks.push(chunk);
      });
      const status = res.statusCode ?? 0;
      const done = () => {
        if (status < 200 || status >= 300) return finish({ ok: false, statusCode: status, error: `HTTP ${status}` });
        if (!req.readBody) return finish({ ok: true, statusCode: status });
        if (read > MAX_RESPONSE_BYTES) return finish({ ok: false, statusCode: status, error: `answer over ${MAX_RESPONSE_BYTES} bytes` });
        if (!res.complete) return finish({ ok: false, statusCode: status, error: 'answer cut off' });
        finish({ ok: true, statusCode: status, body: Buffer.concat(chunks).toString('utf8') });
      };
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    const timer = setTimeout(() => {
      outgoing.destroy();
      finish({ ok: false, error: `no answer within ${req.timeoutMs} ms` });
    }, req.timeoutMs);
    outgoing.on('error', (error: NodeJS.ErrnoException) => finish({ ok: false, error: error.code === 'WEBHOOK_ADDRESS_REFUSED' ? error.message : `${error.code ?? 'error'}: ${error.message}` }));
    outgoing.end(req.body);
  });
}
