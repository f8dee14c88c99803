import type { TemplatedApp } from 'uWebSockets.js';
import type { AnyRoute } from './route.ts';

/*
 * A service started with port 0 learns its port only when listen() binds, after its public URL and
 * route table were made. attachRoutes() records which app serves a route table, listen() which port
 * an app is bound to; the OpenAPI document built from that table then names the port bound.
 */
const appServing = new WeakMap<readonly AnyRoute[], TemplatedApp>();
const portOf = new WeakMap<TemplatedApp, number>();

export const recordServedRoutes = (routes: readonly AnyRoute[], app: TemplatedApp): void => void appServing.set(routes, app);

export const recordBoundPort = (app: TemplatedApp, port: number): void => void portOf.set(app, port);

/** The port of the app serving `routes`, once it is bound. */
export function boundPortOf(routes: readonly AnyRoute[]): number | undefined {
  const app = appServing.get(routes);
  return app && portOf.get(app);
}

/** `url` with an explicit port 0 (any free port) replaced by `port` when it is known; else `url`. */
export function withBoundPort(url: string, port: number | undefined): string {
  if (port === undefined) return url;
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#]*):0(?=[/?#]|$)/i, `$1:${port}`);
}
