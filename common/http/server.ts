import { STATUS_CODES } from 'node:http';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { ApiError, isApiError, toClientError } from '../errors/index.ts';

import type { Logger } from '../log/index.ts';
import { readBody } from './body.ts';
import { ALLOWED_REQUEST_HEADERS, allowOrigin, type CorsPolicy } from './cors.ts';
import type { AnyRoute, HttpMethod, Reply, RequestInfo } from './route.ts';
import { Router } from './router.ts';
import { compileValidator, type Validator } from './validate.ts';

export interface HttpOptions {
  routes: readonly AnyRoute[];
  maxBodyBytes: number;
  cors: CorsPolicy;
  /** Take the client address from the first `X-Forwarded-For` hop (only behind a proxy you run). */
  trustProxy: boolean;
  log: Logger;
  /** Called once per answered request, for metrics. `route` is the pattern, never the raw path. */
  observe?: (method: string, route: string, status: number, seconds: number) => void;
}

interface Compiled {
  route: AnyRoute;
  body?: Validator;
  params?: Validator;
  query?: Validator;
}

const METHODS = new Set<string>(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
const statusLine = (status: number) => `${status} ${STATUS_CODES[status] ?? ''}`;

/**
 * Serves a route table on a uWS app. It owns the uWS rules: request data is copied before the first
 * await, every response has an abort handler, writes after an await are corked, bodies are capped
 * while streaming. Unknown paths get 404, known paths with another method 405 with `Allow`.
 */
export interface AttachedRoutes {
  router: Router;
  /** Resolves when no request is in flight, or after `timeoutMs`; for graceful shutdown. */
  drained(timeoutMs: number): Promise<void>;
}

export function attachRoutes(app: TemplatedApp, options: HttpOptions): AttachedRoutes {
  const router = new Router(options.routes);
  let inflight = 0;
  let onIdle: (() => void)[] = [];
  const finished = () => {
    if (--inflight > 0) return;
    const waiting = onIdle;
    onIdle = [];
    for (const resolve of waiting) resolve();
  };
  const compiled = new Map<AnyRoute, Compiled>();
  for (const route of router.routes) {
    compiled.set(route, {
      route,
      body: route.body && compileValidator(route.body, 'body'),
      params: route.params && compileValidator(route.params, 'params'),
      query: route.query && compileValidator(route.query, 'query'),
    });
  }

  app.any('/*', (res, req) => {
    const started = performance.now();
    const info = requestInfo(res, req, options.trustProxy);
    const rawQuery = req.getQuery() ?? '';
    const origin = allowOrigin(options.cors, info.headers['origin']);
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });

    const send = (reply: Reply | ApiError, routePattern: string) => {
      if (aborted) return;
      const out = isApiError(reply) ? problemReply(reply) : reply;
      res.cork(() => writeReply(res, out, origin));
      options.observe?.(info.method, routePattern, out.status, (performance.now() - started) / 1000);
    };

    const method = req.getMethod().toUpperCase();
    if (method === 'OPTIONS') {
      const match = router.match('GET', info.path);
      const allowed = match.kind === 'found' ? allowedFor(router, info.path) : match.kind === 'method-not-allowed' ? match.allowed : [];
      if (allowed.length === 0) return send(new ApiError('ROUTE_NOT_FOUND', `no route ${info.path}`), 'unmatched');
      return send({ status: 204, headers: preflightHeaders(allowed) }, 'preflight');
    }
    if (!METHODS.has(method)) {
      return send(new ApiError('METHOD_NOT_ALLOWED', `method ${method} is not supported`), 'unmatched');
    }

    const match = router.match(method, info.path);
    if (match.kind === 'not-found') return send(new ApiError('ROUTE_NOT_FOUND', `no route ${method} ${info.path}`), 'unmatched');
    if (match.kind === 'method-not-allowed') {
      const err = new ApiError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${info.path}; allowed: ${match.allowed.join(', ')}`);
      return send(withHeaders(problemReply(err), { allow: match.allowed.join(', ') }), 'unmatched');
    }
    const entry = compiled.get(match.route)!;
    const pattern = match.route.path;

    const contentLength = Number(info.headers['content-length'] ?? '0');
    const hasBody = contentLength > 0 || info.headers['transfer-encoding'] !== undefined;
    if (contentLength > options.maxBodyBytes) {
      return send(new ApiError('PAYLOAD_TOO_LARGE', `body exceeds ${options.maxBodyBytes} bytes`), pattern);
    }

    inflight++;
    const run = async () => {
      let rawBody: Buffer | undefined;
      if (hasBody) {
        const read = await readBody(res, options.maxBodyBytes, () => aborted);
        if (read.kind === 'aborted') return;
        if (read.kind === 'too-large') {
          return send(new ApiError('PAYLOAD_TOO_LARGE', `body exceeds ${options.maxBodyBytes} bytes`), pattern);
        }
        rawBody = read.body;
      }
      const reply = await handle(entry, info, match.params, rawQuery, rawBody);
      send(reply, pattern);
    };
    run().catch((error: unknown) => {
      const reply = toClientError(error);
      if (reply.code === 'UNAVAILABLE') options.log.warn({ err: (error as Error).message, route: pattern }, 'backend unavailable');
      else options.log.error({ err: error instanceof Error ? error.stack : String(error), route: pattern }, 'handler failed');
      send(reply, pattern);
    }).finally(finished);
  });
  return {
    router,
    drained: (timeoutMs) =>
      inflight === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, timeoutMs);
            onIdle.push(() => {
              clearTimeout(timer);
              resolve();
            });
          }),
  };
}

async function handle(
  entry: Compiled,
  info: RequestInfo,
  rawParams: Record<string, string>,
  rawQuery: string,
  rawBody: Buffer | undefined,
): Promise<Reply | ApiError> {
  const { route } = entry;
  let body: unknown;
  if (route.body) {
    const hasBody = rawBody !== undefined && rawBody.length > 0;
    if (!hasBody && !route.bodyOptional) return new ApiError('VALIDATION_FAILED', 'a JSON body is required', { errors: [{ path: '/body', message: 'required' }] });
    if (hasBody) {
      const type = (info.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== '' && type !== 'application/json' && !type.endsWith('+json')) {
        return new ApiError('UNSUPPORTED_MEDIA_TYPE', `content-type ${type} is not accepted; send application/json`);
      }
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        return new ApiError('MALFORMED_JSON', 'request body is not valid JSON');
      }
      const checked = entry.body!(body);
      if (isApiError(checked)) return checked;
      body = checked.value;
    }
  }
  let params: unknown = rawParams;
  if (entry.params) {
    const checked = entry.params(rawParams);
    if (isApiError(checked)) return checked;
    params = checked.value;
  }
  let query: unknown = {};
  if (entry.query) {
    const checked = entry.query(parseQuery(rawQuery));
    if (isApiError(checked)) return checked;
    query = checked.value;
  }
  let auth: unknown;
  if (route.auth) {
    const principal = await route.auth.verify(info);
    if (isApiError(principal)) return principal;
    auth = principal;
  }
  return route.handler({ body, params, query, auth, request: info });
}

function parseQuery(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(raw)) if (!(k in out)) out[k] = v;
  return out;
}

function requestInfo(res: HttpResponse, req: HttpRequest, trustProxy: boolean): RequestInfo {
  const headers: Record<string, string> = {};
  req.forEachHeader((k, v) => {
    headers[k] = v;
  });
  let ip = Buffer.from(res.getRemoteAddressAsText()).toString();
  if (trustProxy) {
    const forwarded = headers['x-forwarded-for']?.split(',')[0]?.trim();
    if (forwarded) ip = forwarded;
  }
  return { method: req.getMethod().toUpperCase() as HttpMethod, path: req.getUrl(), headers, ip };
}

function allowedFor(router: Router, path: string): HttpMethod[] {
  const allowed: HttpMethod[] = [];
  for (const m of METHODS) if (router.match(m, path).kind === 'found') allowed.push(m as HttpMethod);
  return allowed;
}

function preflightHeaders(allowed: HttpMethod[]): Record<string, string> {
  return {
    'access-control-allow-methods': allowed.join(', '),
    'access-control-allow-headers': ALLOWED_REQUEST_HEADERS,
    'access-control-max-age': '600',
  };
}

export function problemReply(error: ApiError): Reply {
  const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
  if (error.extra.retryAfterSeconds !== undefined) headers['retry-after'] = String(Math.max(1, Math.ceil(error.extra.retryAfterSeconds)));
  return { status: error.status, body: error.toProblem(), headers };
}

const withHeaders = (reply: Reply, headers: Record<string, string>): Reply => ({ ...reply, headers: { ...reply.headers, ...headers } });

function writeReply(res: HttpResponse, reply: Reply, origin: string | undefined): void {
  res.writeStatus(statusLine(reply.status));
  let contentType = reply.headers?.['content-type'];
  let payload: string | Buffer | undefined;
  if (reply.body === undefined) payload = undefined;
  else if (typeof reply.body === 'string' || Buffer.isBuffer(reply.body)) payload = reply.body;
  else {
    payload = JSON.stringify(reply.body);
    contentType ??= 'application/json';
  }
  if (contentType) res.writeHeader('content-type', contentType);
  for (const [k, v] of Object.entries(reply.headers ?? {})) if (k !== 'content-type') res.writeHeader(k, v);
  if (origin) {
    res.writeHeader('access-control-allow-origin', origin);
    res.writeHeader('access-control-expose-headers', 'retry-after, allow');
    if (origin !== '*') res.writeHeader('vary', 'Origin');
  }
  res.writeHeader('cache-control', 'no-store');
  res.end(payload);
}
