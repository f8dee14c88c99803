import type { Static, TSchema } from 'typebox';
import type { ApiError } from '../errors/index.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a handler returns on success; errors are returned as `ApiError` values. */
export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The request as copied out of uWS before the first await (uWS request objects die after it). */
export interface RequestInfo {
  /** As sent, upper-cased. A HEAD request runs its GET route's handler and keeps `HEAD` here. */
  method: string;
  path: string;
  /** Lower-cased header names. */
  headers: Readonly<Record<string, string>>;
  /** Client address: the socket's, or the first X-Forwarded-For hop when the proxy is trusted. */
  ip: string;
}

export interface RequestContext<B, P, Q, A> {
  body: B;
  params: P;
  query: Q;
  auth: A;
  request: RequestInfo;
}

/**
 * Verifies the credentials of a request. Returns the principal or the error to send; it runs after
 * the body is read and validated, so an unauthenticated request costs no more than reading it.
 */
export type Authenticator<A> = (request: RequestInfo) => A | ApiError | Promise<A | ApiError>;

export interface ResponseDoc {
  description: string;
  schema?: TSchema;
}

/**
 * How a route authenticates. `responses` are the statuses the authenticator itself can answer (for
 * example 429 when it also counts requests), documented on every route that uses it.
 */
export interface AuthSpec<A> {
  verify: Authenticator<A>;
  /** The OpenAPI security scheme it implements (a list: any one of them). */
  security: string | string[];
  responses?: Record<number, ResponseDoc>;
}

export interface RouteSpec<
  BS extends TSchema | undefined,
  PS extends TSchema | undefined,
  QS extends TSchema | undefined,
  A,
> {
  method: HttpMethod;
  /** Path with `:name` segments, e.g. `/api/client/apps/:appId`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  body?: BS;
  params?: PS;
  query?: QS;
  /** Omit for public routes. */
  auth?: AuthSpec<A>;
  /** Whether an absent body is accepted as `{}`-less `undefined` (operations the spec sends without a body). */
  bodyOptional?: boolean;
  /** The largest body this route takes, when larger than the server's (MAX_BODY_BYTES): a bulk write's. */
  maxBodyBytes?: number;
  /**
   * Request headers the handler reads, as an object schema keyed by header name: documented as
   * OpenAPI header parameters. The handler checks them (the HTTP layer does not).
   */
  headers?: TSchema;
  /**
   * The route answers from process memory alone (no store, no bus), so it never answers 503. The
   * statuses the HTTP layer adds to every route are in statuses.ts.
   */
  inProcess?: boolean;
  /** The statuses the handler answers; those of the HTTP layer and the authenticator are added. */
  responses: Record<number, ResponseDoc>;
  handler: (
    ctx: RequestContext<
      BS extends TSchema ? Static<BS> : undefined,
      PS extends TSchema ? Static<PS> : Record<string, never>,
      QS extends TSchema ? Static<QS> : Record<string, never>,
      A
    >,
  ) => Reply | ApiError | Promise<Reply | ApiError>;
}

/** A route with its types erased, as the router and the OpenAPI generator see it. */
export interface AnyRoute {
  method: HttpMethod;
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  body?: TSchema;
  params?: TSchema;
  query?: TSchema;
  auth?: AuthSpec<unknown>;
  bodyOptional?: boolean;
  maxBodyBytes?: number;
  headers?: TSchema;
  inProcess?: boolean;
  responses: Record<number, ResponseDoc>;
  handler: (ctx: RequestContext<unknown, unknown, unknown, unknown>) => Reply | ApiError | Promise<Reply | ApiError>;
}

/** Checks the handler against its schemas at compile time and erases the types for the router. */
export function defineRoute<
  BS extends TSchema | undefined = undefined,
  PS extends TSchema | undefined = undefined,
  QS extends TSchema | undefined = undefined,
  A = undefined,
>(spec: RouteSpec<BS, PS, QS, A>): AnyRoute {
  return spec as unknown as AnyRoute;
}
