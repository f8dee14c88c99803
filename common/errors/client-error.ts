import { ApiError } from './api-error.ts';
import { BackendUnavailableError, OverloadedError } from './internal.ts';

/**
 * What a client is told about an exception a handler threw: `UNAVAILABLE` when a backend is down
 * (with a retry hint when it is only overloaded), and `INTERNAL` for anything else, which is a bug
 * to log. Never carries the exception's message, which may name internals.
 */
export function toClientError(error: unknown): ApiError {
  if (error instanceof OverloadedError) return new ApiError('UNAVAILABLE', 'a backend is overloaded; retry later', { retryAfterSeconds: error.retryAfterSeconds });
  if (error instanceof BackendUnavailableError) return new ApiError('UNAVAILABLE', 'a backend is unavailable; retry later');
  return new ApiError('INTERNAL', 'internal error');
}
