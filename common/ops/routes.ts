import Type from 'typebox';
import { defineRoute, type AnyRoute } from '../http/index.ts';
import type { ServiceMetrics } from './metrics.ts';

export interface OpsOptions {
  metrics: ServiceMetrics;
  /** Whether the service can do its work now (backends reachable, not draining). */
  ready: () => boolean | Promise<boolean>;
  openApi: () => Record<string, unknown>;
}

const Status = Type.Object({ status: Type.String() });

/** `/healthz` (the process answers), `/readyz` (it should get traffic), `/metrics`, `/openapi.json`. */
export function opsRoutes(options: OpsOptions): AnyRoute[] {
  let openApiText: string | undefined;
  return [
    defineRoute({
      method: 'GET',
      path: '/healthz',
      operationId: 'health',
      inProcess: true,
      summary: 'Liveness: the process is serving',
      tags: ['operations'],
      responses: { 200: { description: 'Alive', schema: Status } },
      handler: () => ({ status: 200, body: { status: 'ok' } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/readyz',
      operationId: 'ready',
      summary: 'Readiness: backends reachable and not shutting down',
      tags: ['operations'],
      responses: { 200: { description: 'Ready', schema: Status }, 503: { description: 'Not ready' } },
      handler: async () => ((await options.ready()) ? { status: 200, body: { status: 'ready' } } : { status: 503, body: { status: 'not ready' } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/metrics',
      operationId: 'metrics',
      inProcess: true,
      summary: 'Prometheus metrics',
      tags: ['operations'],
      responses: { 200: { description: 'Prometheus text exposition format' } },
      handler: async () => ({
        status: 200,
        body: await options.metrics.registry.metrics(),
        headers: { 'content-type': options.metrics.registry.contentType },
      }),
    }),
    defineRoute({
      method: 'GET',
      path: '/openapi.json',
      operationId: 'openApi',
      inProcess: true,
      summary: 'This OpenAPI 3.1 description',
      tags: ['operations'],
      responses: { 200: { description: 'OpenAPI document' } },
      handler: () => ({ status: 200, body: (openApiText ??= JSON.stringify(options.openApi())), headers: { 'content-type': 'application/json' } }),
    }),
  ];
}
