import type { AnyRoute, HttpMethod, ResponseDoc } from './route.ts';

/**
 * The statuses the HTTP layer (server.ts) answers for a route around its handler, whatever the
 * handler does. The OpenAPI document lists them beside the route's own and its authenticator's, so
 * it names every status a route can answer: what server.ts refuses and this table change together.
 */
export function layerResponses(route: AnyRoute): Record<number, ResponseDoc> {
  const out: Record<number, ResponseDoc> = {};
  if (route.body || route.params || route.query) {
    out[400] = { description: 'The request does not match the schema (VALIDATION_FAILED)' + (route.body ? ', or the body is not JSON (MALFORMED_JSON)' : '') };
  }
  // The router matches no route when a path segment is not valid percent-encoding.
  if (route.params) out[404] = { description: 'A path parameter is not valid percent-encoding (ROUTE_NOT_FOUND)' };
  // Every route reads (and caps) a body that is sent, whether or not it takes one.
  out[413] = { description: 'The request body is larger than MAX_BODY_BYTES (PAYLOAD_TOO_LARGE)' };
  if (route.body) out[415] = { description: 'The body is not application/json (UNSUPPORTED_MEDIA_TYPE)' };
  // Answered by the HTTP parser (uWebSockets.js) before this service sees the request, as an HTML
  // page rather than a problem: more than 4 KiB of request line and headers.
  out[431] = { description: 'The request line and headers are larger than 4 KiB (answered by the HTTP parser, not as a problem)' };
  out[500] = { description: 'An unexpected failure, logged by the service (INTERNAL)' };
  if (!route.inProcess) out[503] = { description: 'A backend is unavailable or overloaded (UNAVAILABLE); retry later, after Retry-After when given' };
  return out;
}

const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/**
 * The `Allow` value of a path served by `methods`: those, plus HEAD wherever GET is (RFC 9110
 * §9.3.2, answered like GET without content) and OPTIONS, which every known path answers.
 */
export function allowHeader(methods: readonly HttpMethod[]): string {
  const allowed = new Set<string>([...methods, 'OPTIONS']);
  if (allowed.has('GET')) allowed.add('HEAD');
  return ALLOW_ORDER.filter((m) => allowed.has(m)).join(', ');
}
