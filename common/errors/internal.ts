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
