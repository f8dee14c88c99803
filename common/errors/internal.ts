/**
 * Thrown by a store or bus when its backend cannot be reached. The HTTP layer answers 503, the
 * WebSocket layer an `UNAVAILABLE` error; nothing is acknowledged.
 */
export class BackendUnavailableError extends Error {
  readonly code = 'BACKEND_UNAVAILABLE';
  constructor(
    readonly backend: string,
    options?: { cause?: unknown },
  ) {
    super(`${backend} is unavailable`, options);
  }
}

/**
 * A backend refused work because it is at its bound (calls in flight, queue length): nothing was
 * done, and the same request may succeed after `retryAfterSeconds`. The HTTP layer answers 503
 * with `Retry-After`.
 */
export class OverloadedError extends BackendUnavailableError {
  override readonly name = 'OverloadedError';
  constructor(
    backend: string,
    readonly retryAfterSeconds: number,
    options?: { cause?: unknown },
  ) {
    super(backend, options);
    this.message = `${backend} is overloaded; retry after ${retryAfterSeconds} s`;
  }
}
