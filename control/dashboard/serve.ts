import { STATUS_CODES } from 'node:http';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { ApiError, type Logger } from '../../common/index.ts';
import { loadDashboard, type Asset, type DashboardFiles } from './bundle.ts';

export interface DashboardOptions {
  log: Logger;
  /** Called once per answered request, as the API's routes do, for the HTTP metrics. */
  observe?: (method: string, route: string, status: number, seconds: number) => void;
}

/**
 * The page runs only the bundle it was served with: no inline script or style, no other origin,
 * no plugins, no framing. The QR code of an MFA enrolment is shown as a `data:` image (an SVG as
 * an image runs no script). The API is on the same origin, so `connect-src 'self'` covers it.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

const ALLOW = 'GET, HEAD, OPTIONS';
const statusLine = (status: number) => `${status} ${STATUS_CODES[status] ?? ''}`;

/**
 * Serves the dashboard page at `/` and its bundle under `/dashboard/`, beside the API on the same
 * uWS app. These are raw handlers rather than API routes: they answer HTML, scripts and styles with
 * cache headers of their own, and the OpenAPI document describes the API only. uWS matches static
 * paths before the API's `/*`, so every other path keeps its 404 and 405 answers.
 *
 * The bundle is built before the service starts (`npm run build:dashboard`, which `npm install`,
 * `npm start` and `npm test` run) and read on the first request for it; a missing bundle is logged
 * with the command that makes it, answered 500, and looked for again on the next request.
 */
export function serveDashboard(app: TemplatedApp, options: DashboardOptions): void {
  let files: Promise<DashboardFiles> | undefined;
  const dashboard = () =>
    (files ??= loadDashboard().catch((error: unknown) => {
      files = undefined;
      options.log.error({ err: error instanceof Error ? error.message : String(error) }, 'dashboard page not available');
      throw error;
    }));

  const handle = (route: string) => (res: HttpResponse, req: HttpRequest) => {
    const started = performance.now();
    // uWS request data is gone after the first await: copy what is needed now.
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const ifNoneMatch = req.getHeader('if-none-match');
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    const done = (status: number) => options.observe?.(method, route, status, (performance.now() - started) / 1000);

    if (method === 'OPTIONS') {
      res.writeStatus(statusLine(204)).writeHeader('allow', ALLOW).endWithoutBody();
      return done(204);
    }
    if (method !== 'GET' && method !== 'HEAD') {
      writeProblem(res, new ApiError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}; allowed: ${ALLOW}`), method);
      return done(405);
    }
    dashboard().then(
      (built) => {
        if (aborted) return;
        const asset = path === '/' ? built.page : built.assets.get(path);
        res.cork(() => {
          if (!asset) writeProblem(res, new ApiError('ROUTE_NOT_FOUND', `no route ${method} ${path}`), method);
          else writeAsset(res, asset, method === 'HEAD', ifNoneMatch);
        });
        done(!asset ? 404 : ifNoneMatch === asset.etag ? 304 : 200);
      },
      () => {
        if (aborted) return;
        res.cork(() => writeProblem(res, new ApiError('INTERNAL', 'the dashboard page is not built; the service log says why'), method));
        done(500);
      },
    );
  };
  app.any('/', handle('/'));
  app.any('/dashboard/*', handle('/dashboard/*'));
}

function writeAsset(res: HttpResponse, asset: Asset, head: boolean, ifNoneMatch: string): void {
  const notModified = ifNoneMatch === asset.etag;
  res.writeStatus(statusLine(notModified ? 304 : 200));
  res.writeHeader('content-type', asset.contentType);
  res.writeHeader('etag', asset.etag);
  res.writeHeader('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.writeHeader(name, value);
  if (notModified) return void res.endWithoutBody();
  if (!head) return void res.end(asset.body);
  // HEAD: GET's Content-Length and no content (written as a header: see common/http/server.ts).
  res.writeHeader('content-length', String(asset.body.length));
  res.endWithoutBody();
}

function writeProblem(res: HttpResponse, error: ApiError, method: string): void {
  const body = JSON.stringify(error.toProblem());
  res.writeStatus(statusLine(error.status));
  res.writeHeader('content-type', 'application/problem+json');
  res.writeHeader('cache-control', 'no-store');
  res.writeHeader('x-content-type-options', 'nosniff');
  if (error.code === 'METHOD_NOT_ALLOWED') res.writeHeader('allow', ALLOW);
  if (method !== 'HEAD') return void res.end(body);
  res.writeHeader('content-length', String(Buffer.byteLength(body)));
  res.endWithoutBody();
}
