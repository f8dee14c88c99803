import { errorCodes, type ErrorCode } from './codes.ts';

export interface FieldProblem {
  /** JSON pointer into the request part that failed (`/body/email`, `/query/size`). */
  path: string;
  message: string;
}

/**
 * A client-facing error as a value: handlers return it, the HTTP layer renders it as
 * `application/problem+json`. Nothing here carries secrets, so it is safe to log.
 */
export class ApiError {
  readonly status: number;
  readonly title: string;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string = errorCodes[code].title,
    readonly extra: { errors?: FieldProblem[]; retryAfterSeconds?: number } = {},
  ) {
    this.status = errorCodes[code].status;
    this.title = errorCodes[code].title;
  }

  /** A refusal of one field: `detail` and the one problem both name `path` (a JSON pointer). */
  static field(code: ErrorCode, path: string, message: string): ApiError {
    return new ApiError(code, `${path}: ${message}`, { errors: [{ path, message }] });
  }

  toProblem(): Problem {
    const problem: Problem = {
      type: `urn:chat-service:problem:${this.code.toLowerCase().replaceAll('_', '-')}`,
      title: this.title,
      status: this.status,
      detail: this.detail,
      code: this.code,
    };
    if (this.extra.errors) problem.errors = this.extra.errors;
    return problem;
  }
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: FieldProblem[];
}

export const isApiError = (value: unknown): value is ApiError => value instanceof ApiError;
