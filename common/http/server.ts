import { STATUS_CODES } from 'node:http';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { ApiError, isApiError, toClientError } from '../errors/index.ts';

import type { Logger } from '../log/index.ts';
import { readBody } from './body.ts';
import { recordServedRoutes } from './bound-port.ts';
import { ALLOWED_REQUEST_HEADERS, allowOrigin, type CorsPolicy } from './cors.ts';
import type { AnyRoute, Reply, RequestInfo } from './route.ts';
import { Router } from './router.ts';
import { allowHeader } from './statuses.ts';
import { compileValidator, type Validator } from './validate.ts';

export interface HttpOptions {
  routes: readonly AnyRoute[];
  maxBodyBytes: number;
  cors: CorsPolicy;
  /**
   * Proxies of the operator's own in front of the service (0: none). Each appends the address it
   * got the request from to `X-Forwarded-For`, so the client is the entry this many from the
   * right; entries further left are the client's own claims and are never taken.
   */
  trustedProxyHops: number;
  log: Logger;
  /** Called once per answered request, for metrics. `route` is the pattern, never the raw path. */
  observe?: (method: string, route: string, status: number, seconds: number) => void;
}

interface Compiled {
  route: AnyRoute;
  body?: Validator;
  params?: Validator;
  query?: Validator;
  /** The query parameters the route takes (none without a query schema); any other is refused. */
  queryNames: readonly string[];
}

const statusLine = (status: number) => `${status} ${STATUS_CODES[status] ?? ''}`;

export interface AttachedRoutes {
  router: Router;
  /** Resolves when no request is in flight, or after `timeoutMs`; for graceful shutdown. */
  drained(timeoutMs: number): Promise<void>;
}

/**
 * Serves a route table on a uWS app. It owns the uWS rules: request data is copied before the first
 * await, every response has an abort handler, writes after an await are corked, bodies are capped
 * while streaming. Every method uWS hands over is answered the same way (RFC 9110 §9, §15.5.6);
 * the uWS build we pin hands over only RFC 9110's eight and PATCH, and closes the connection on
 * any other (README, HTTP rules):
 * - a path no route serves: 404, whatever the method;
 * - OPTIONS on a known path: 204 with `Allow` (and the CORS preflight headers);
 * - HEAD runs the path's GET route and answers its status and headers with no content;
 * - any other method the path does not serve (TRACE, CONNECT, QUERY, …): 405 with `Allow`.
 * A response to HEAD, and a 204 or 304, never carries content (nor a 204 a Content-Length), so a
 * kept-alive connection stays in step.
 */
export function attachRoutes(app: TemplatedApp, options: HttpOptions): AttachedRoutes {
  const router = new Router(options.routes);
  recordServedRoutes(options.routes, app);
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
      queryNames: Object.keys((route.query as { properties?: object } | undefined)?.properties ?? {}),
    });
  }

  app.any('/*', (res, req) => {
    const started = performance.now();
    const info = requestInfo(res, req, options.trustedProxyHops);
    const rawQuery = req.getQuery() ?? '';
    const origin = allowOrigin(options.cors, info.headers['origin']);
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });

    const method = info.method;
    const head = method === 'HEAD';
    const send = (reply: Reply | ApiError, routePattern: string) => {
      if (aborted) return;
      const out = isApiError(reply) ? problemReply(reply) : reply;
      res.cork(() => writeReply(res, out, origin, head));
      options.observe?.(method, routePattern, out.status, (performance.now() - started) / 1000);
    };

    // No route has method OPTIONS (nor HEAD: it is matched as GET), so they never match as found.
    const match = router.match(head ? 'GET' : method, info.path);
    if (match.kind === 'not-found') return send(new ApiError('ROUTE_NOT_FOUND', `no route ${method} ${info.path}`), 'unmatched');
    if (match.kind === 'method-not-allowed') {
      const allow = allowHeader(match.allowed);
      if (method === 'OPTIONS') return send({ status: 204, headers: { allow, ...preflightHeaders(allow) } }, 'preflight');
      const err = new ApiError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${info.path}; allowed: ${allow}`);
      return send(withHeaders(problemReply(err), { allow }), 'unmatched');
    }
    const entry = compiled.get(match.route)!;
    const pattern = match.route.path;

    const contentLength = Number(info.headers['content-length'] ?? '0');
    const hasBody = contentLength > 0 || info.headers['transfer-encoding'] !== undefined;
    const maxBodyBytes = Math.max(options.maxBodyBytes, match.route.maxBodyBytes ?? 0);
    if (contentLength > maxBodyBytes) {
      return send(new ApiError('PAYLOAD_TOO_LARGE', `body exceeds ${maxBodyBytes} bytes`), pattern);
    }

    inflight++;
    const run = async () => {
      let rawBody: Buffer | undefined;
      if (hasBody) {
        const read = await readBody(res, maxBodyBytes, () => aborted);
        if (read.kind === 'aborted') return;
        if (read.kind === 'too-large') {
          return send(new ApiError('PAYLOAD_TOO_LARGE', `body exceeds ${maxBodyBytes} bytes`), pattern);
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
  // Unknown query parameters are refused, as unknown body fields are: a misspelt `sise=5` must not
  // be answered as if it were not there.
  const parsed = parseQuery(rawQuery);
  const known = entry.queryNames;
  const unknown = Object.keys(parsed).filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    const rule = known.length > 0 ? `is not a parameter of this route (known: ${known.join(', ')})` : 'is not a parameter of this route (it takes none)';
    const errors = unknown.slice(0, 10).map((name) => ({ path: `/query/${name}`, message: rule }));
    return new ApiError('VALIDATION_FAILED', `/query/${unknown[0]}: ${rule}`, { errors });
  }
  let query: unknown = {};
  if (entry.query) {
    const checked = entry.query(parsed);
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

function requestInfo(res: HttpResponse, req: HttpRequest, trustedProxyHops: number): RequestInfo {
  const headers: Record<string, string> = {};
  req.forEachHeader((k, v) => {
    headers[k] = v;
  });
  let ip = Buffer.from(res.getRemoteAddressAsText()).toString();
  if (trustedProxyHops > 0) {
    const forwarded = headers['x-forwarded-for']?.split(',') ?? [];
    const client = forwarded[forwarded.length - trustedProxyHops]?.trim();
    if (client) ip = client;
  }
  return { method: req.getMethod().toUpperCase(), path: req.getUrl(), headers, ip };
}

function preflightHeaders(allow: string): Record<string, string> {
  return {
    'access-control-allow-methods': allow,
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

/** Writes the whole response in one corked write; `head`: the status and headers only (RFC 9110 §9.3.2). */
function writeReply(res: HttpResponse, reply: Reply, origin: string | undefined, head: boolean): void {
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
  // 204 and 304 have no content and a 204 no Content-Length (RFC 9110 §8.6, §15.3.5, §15.4.5).
  if (reply.status === 204 || reply.status === 304) return void res.endWithoutBody();
  if (!head) return void res.end(payload);
  // HEAD: the Content-Length GET would send, and no content, or the client would read it as the
  // next response. Written as a header: this uWS's endWithoutBody(length) never marks the response
  // done (fixed upstream in v20.75), and the next request on the connection would close it.
  res.writeHeader('content-length', String(payload === undefined ? 0 : Buffer.byteLength(payload)));
  res.endWithoutBody();
}
