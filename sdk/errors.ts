import { isRetryable, type ErrorCode } from './codes.ts';

/**
 * Errors of the SDK: one class per kind of failure, each keeping what caused it. `ChatApiError` is a
 * problem response from the service, with its stable `code` (the README's error table).
 */
export class ChatError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** One of the service's codes (a newer service may send one this SDK does not list yet). */
  code: ErrorCode | (string & {});
  errors?: { path: string; message: string }[];
}

/**
 * The service answered with an error (HTTP problem or WebSocket error frame). `retryable`: the same
 * request may succeed later (RETRYABLE_CODES), not before `retryAfterMs` when the service said how
 * long to wait (HTTP `Retry-After`, a WebSocket error frame's `retryAfter`).
 */
export class ChatApiError extends ChatError {
  readonly status: number;
  readonly code: ErrorCode | (string & {});
  readonly problem: Problem;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(problem: Problem, options?: { retryAfterMs?: number | undefined }) {
    super(`${problem.code}: ${problem.detail}`);
    this.status = problem.status;
    this.code = problem.code;
    this.problem = problem;
    this.retryable = isRetryable(problem.code);
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** The service could not be reached, or answered with something that is not the protocol. */
export class ChatNetworkError extends ChatError {}

/** An action got no ack or error in time. It may still have happened: retry with the same idempotency key. */
export class ChatTimeoutError extends ChatError {}

/** The client was closed, or is not signed in. */
export class ChatStateError extends ChatError {}
