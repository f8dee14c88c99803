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
 * A write was sent but its outcome is unknown: the database timed out after some replicas may
 * have applied it, or the node that ran it stopped answering mid-call. It may be stored, now or
 * later. The client is told `OUTCOME_UNKNOWN` (503), never that it failed: a retry with the same
 * idempotency key returns the message if it was stored and stores it once otherwise.
 */
export class OutcomeUnknownError extends BackendUnavailableError {
  override readonly name = 'OutcomeUnknownError';
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

/**
 * A listener could not bind its port, so the process cannot serve. `code` is stable:
 * `PORT_IN_USE` when another socket listens there (another instance, or another program), else
 * `LISTEN_FAILED` (address not available, permission denied), with the operating system's reason.
 */
export class ListenError extends Error {
  override readonly name = 'ListenError';
  constructor(
    readonly code: 'PORT_IN_USE' | 'LISTEN_FAILED',
    readonly host: string,
    readonly port: number,
    reason?: string,
    options?: { cause?: unknown },
  ) {
    super(code === 'PORT_IN_USE' ? `port ${port} on ${host} is in use: another process listens there` : `cannot listen on ${host}:${port}${reason ? ` (${reason})` : ''}`, options);
  }
}
