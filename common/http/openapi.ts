import type { TSchema } from 'typebox';
import { ProblemSchema } from '../errors/index.ts';
import type { AnyRoute } from './route.ts';

export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  serverUrl: string;
  securitySchemes: Record<string, unknown>;
}

/** TypeBox schemas are JSON Schema; a JSON round trip drops TypeBox's symbol-keyed metadata. */
const plain = (schema: TSchema): Record<string, unknown> => JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;

/**
 * Builds the OpenAPI 3.1 document from the same route table and schemas that serve and validate
 * requests, so the description cannot drift from the code.
 */
export function buildOpenApi(routes: readonly AnyRoute[], info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const oaPath = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const parameters: unknown[] = [];
    for (const [where, schema] of [
      ['path', route.params],
      ['query', route.query],
    ] as const) {
      if (!schema) continue;
      const props = (plain(schema).properties ?? {}) as Record<string, Record<string, unknown>>;
      const required = new Set((plain(schema).required ?? []) as string[]);
      for (const [name, s] of Object.entries(props)) {
        const { description, ...rest } = s;
        parameters.push({ name, in: where, required: where === 'path' || required.has(name), schema: rest, ...(description ? { description } : {}) });
      }
    }
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(route.responses)) {
      const isError = Number(status) >= 400;
      responses[status] = {
        description: doc.description,
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
      ...(route.auth ? { security: [{ [route.auth.security]: [] }] } : { security: [] }),
    };
    (paths[oaPath] ??= {})[route.method.toLowerCase()] = operation;
  }
  const { $id: _id, ...problem } = plain(ProblemSchema);
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    servers: [{ url: info.serverUrl }],
    paths,
    components: { schemas: { Problem: problem }, securitySchemes: info.securitySchemes },
  };
}
