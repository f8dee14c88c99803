import type { TSchema } from 'typebox';
import { ProblemSchema } from '../errors/index.ts';
import { boundPortOf, withBoundPort } from './bound-port.ts';
import type { AnyRoute, ResponseDoc } from './route.ts';
import { layerResponses } from './statuses.ts';

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  /** Where the service is reached. An explicit port 0 is written as the port `routes` are served on, once bound. */
  serverUrl: string;
  securitySchemes: Record<string, unknown>;
}

/** TypeBox schemas are JSON Schema; a JSON round trip drops TypeBox's symbol-keyed metadata. */
const plain = (schema: TSchema): Record<string, unknown> => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

/**
 * What the HTTP layer answers outside the operations listed (server.ts): no operation answers 405,
 * so it is stated once here rather than on operations that never return it.
 */
const HTTP_RULES =
  'HTTP rules of every path: a method the path does not serve gets 405 METHOD_NOT_ALLOWED with an `Allow` header ' +
  'naming the methods it does, HEAD wherever GET is, and OPTIONS. HEAD is answered as GET is (same status and headers) ' +
  'without content. OPTIONS gets 204 with `Allow`. A path no route serves gets 404 ROUTE_NOT_FOUND, whatever the method.';

/** Responses that carry a `Retry-After` header when the service knows how long to wait. */
const RETRY_AFTER = new Set([429, 503]);

/**
 * Builds the OpenAPI 3.1 document from the same route table and schemas that serve and validate
 * requests, so the description cannot drift from the code. Each operation lists every status it can
 * answer: its handler's, its authenticator's and the HTTP layer's (statuses.ts).
 */
export function buildOpenApi(routes: readonly AnyRoute[], info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const oaPath = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const parameters: unknown[] = [];
    for (const [where, schema] of [
      ['path', route.params],
      ['query', route.query],
      ['header', route.headers],
    ] as const) {
      if (!schema) continue;
      const props = (plain(schema).properties ?? {}) as Record<string, Record<string, unknown>>;
      const required = new Set((plain(schema).required ?? []) as string[]);
      for (const [name, s] of Object.entries(props)) {
        const { description, ...rest } = s;
        parameters.push({ name, in: where, required: where === 'path' || required.has(name), schema: rest, ...(description ? { description } : {}) });
      }
    }
    const docs: Record<number, ResponseDoc> = { ...layerResponses(route), ...route.auth?.responses, ...route.responses };
    // A status both the authenticator and the route answer is described as both (an error either way).
    for (const [status, doc] of Object.entries(route.auth?.responses ?? {})) {
      const own = route.responses[Number(status)];
      if (own && own.description !== doc.description) docs[Number(status)] = { ...own, description: `${own.description}; or ${doc.description}` };
    }
    const responses: Record<string, unknown> = {};
    // Integer keys iterate in ascending order, so statuses are listed sorted.
    for (const [status, doc] of Object.entries(docs)) {
      const isError = Number(status) >= 400;
      responses[status] = {
        description: doc.description,
        ...(RETRY_AFTER.has(Number(status)) ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying, when known', schema: { type: 'integer', minimum: 1 } } } } : {}),
        ...(isError
          ? { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } }
          : doc.schema
            ? { content: { 'application/json': { schema: plain(doc.schema) } } }
            : {}),
      };
    }
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: route.tags,
      ...(route.description ? { description: route.description } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? { requestBody: { required: !route.bodyOptional, content: { 'application/json': { schema: plain(route.body) } } } }
        : {}),
      responses,
      ...(route.auth ? { security: [route.auth.security].flat().map((scheme) => ({ [scheme]: [] })) } : { security: [] }),
    };
    (paths[oaPath] ??= {})[route.method.toLowerCase()] = operation;
  }
  const { $id: _id, ...problem } = plain(ProblemSchema);
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: `${info.description}\n\n${HTTP_RULES}` },
    servers: [{ url: withBoundPort(info.serverUrl, boundPortOf(routes)) }],
    paths,
    components: { schemas: { Problem: problem }, securitySchemes: info.securitySchemes },
  };
}
