export { errorCodes, type ErrorCode, type RetryableCode } from './codes.ts';
export { ApiError, isApiError, type Problem, type FieldProblem } from './api-error.ts';
export { ProblemSchema } from './schema.ts';
export { BackendUnavailableError, ListenError, OutcomeUnknownError, OverloadedError } from './internal.ts';
export { toClientError } from './client-error.ts';
