import { ApiError } from './api-error.ts';
import { BackendUnavailableError, OutcomeUnknownError, OverloadedError } from './internal.ts';

/**
 * What a client is told about an exception a handler threw: `UNAVAILABLE` when a backend is down
 * (with a retry hint when it is only overloaded), `OUTCOME_UNKNOWN` when a write was sent but
 * may or may not have been stored, and `INTERNAL` for anything else, which is a bug
 * to log. Never carries the exception's message, which may name internals.
 */
export function toClientError(error: unknown): ApiError {
  if (error instanceof OverloadedError) return new ApiError('UNAVAILABLE', 'a backend is overloaded; retry later', { retryAfterSeconds: error.retryAfterSeconds });
  if (error instanceof OutcomeUnknownError) return new ApiError('OUTCOME_UNKNOWN', 'the write may or may not have been stored; retry it with the same idempotency key');
  if (error instanceof BackendUnavailableError) return new ApiError('UNAVAILABLE', 'a backend is unavailable; retry later');
  return new ApiError('INTERNAL', 'internal error');
}
