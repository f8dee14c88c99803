/**
 * The service's code tables as the SDK sees them: the error codes of problem responses and error
 * frames (the README's error table), and the WebSocket close codes with the ranges that say what a
 * client does next. Kept here so the SDK ships alone; test/sdk/types.typetest.ts fails to compile
 * when either table drifts from the service's (`common/errors/codes.ts`, `node/realtime/protocol.ts`).
 */

/** Every `code` a problem response or an error frame carries. */
export type ErrorCode =
  | 'MALFORMED_JSON'
  | 'MALFORMED_FRAME'
  | 'UNKNOWN_ACTION'
  | 'VALIDATION_FAILED'
  | 'CONTENT_BLOCKED'
  | 'AUTH_REQUIRED'
  | 'TOKEN_INVALID'
  | 'TOKEN_EXPIRED'
  | 'INVALID_CREDENTIALS'
  | 'REFRESH_TOKEN_INVALID'
  | 'REFRESH_TOKEN_REUSED'
  | 'API_KEY_INVALID'
  | 'NOT_ALLOWED'
  | 'USER_BANNED'
  | 'USER_BLOCKED'
  | 'USER_MUTED'
  | 'MEMBER_BANNED'
  | 'BLOCK_LIMIT_REACHED'
  | 'CHAT_NOT_ACCESSIBLE'
  | 'ROUTE_NOT_FOUND'
  | 'USER_NOT_FOUND'
  | 'CHAT_NOT_FOUND'
  | 'MESSAGE_NOT_FOUND'
  | 'USERNAME_TAKEN'
  | 'MESSAGE_DELETED'
  | 'MEMBER_LIMIT_REACHED'
  | 'CHAT_LIMIT_REACHED'
  | 'MFA_CODE_INVALID'
  | 'MFA_ALREADY_ENABLED'
  | 'MFA_NOT_PENDING'
  | 'MFA_NOT_ENABLED'
  | 'APP_NOT_FOUND'
  | 'PUSH_PROVIDER_NOT_SET'
  | 'PUSH_NOT_CONFIGURED'
  | 'PUSH_DEVICE_NOT_FOUND'
  | 'KEY_NOT_FOUND'
  | 'WEBHOOK_NOT_FOUND'
  | 'WEBHOOK_DELIVERY_NOT_FOUND'
  | 'BEFORE_SEND_NOT_FOUND'
  | 'BAN_NOT_FOUND'
  | 'SIGNED_URL_INVALID'
  | 'SIGNED_URL_EXPIRED'
  | 'FILE_NOT_FOUND'
  | 'UPLOAD_NOT_FOUND'
  | 'ATTACHMENT_NOT_FOUND'
  | 'ATTACHMENT_IN_USE'
  | 'PIN_LIMIT_REACHED'
  | 'OPEN_THREAD_LIMIT_REACHED'
  | 'UPLOAD_INCOMPLETE'
  | 'UPLOAD_FINALIZED'
  | 'FILE_TOO_LARGE'
  | 'STORAGE_QUOTA_EXCEEDED'
  | 'FILE_TYPE_REFUSED'
  | 'BLOCK_NOT_FOUND'
  | 'MUTE_NOT_FOUND'
  | 'FLAG_NOT_FOUND'
  | 'ALREADY_FLAGGED'
  | 'METHOD_NOT_ALLOWED'
  | 'ACCOUNT_EXISTS'
  | 'APP_SUSPENDED'
  | 'KEY_REVOKED'
  | 'APP_LIMIT_REACHED'
  | 'KEY_LIMIT_REACHED'
  | 'WEBHOOK_LIMIT_REACHED'
  | 'PUSH_DEVICE_LIMIT_REACHED'
  | 'PAYLOAD_TOO_LARGE'
  | 'FRAME_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'FILE_INFECTED'
  | 'IMAGE_UNREADABLE'
  | 'MESSAGE_REJECTED'
  | 'RATE_LIMITED'
  | 'TOO_MANY_CONNECTIONS'
  | 'INTERNAL'
  | 'UNAVAILABLE'
  | 'OUTCOME_UNKNOWN'
  | 'BEFORE_SEND_FAILED';

/**
 * The codes whose request may succeed later unchanged, after the `retryAfterMs` of the error when
 * it has one: a limit, an overload, a backend that is down. Any other code answers the request
 * itself (sending it again gets the same answer; `INTERNAL` is a bug a retry only repeats). A send
 * retried after one of these is safe with the same idempotency key; after `OUTCOME_UNKNOWN` (the
 * write may have been stored) only with it: the retry returns the message if it was stored.
 */
export const RETRYABLE_CODES = Object.freeze(['RATE_LIMITED', 'UNAVAILABLE', 'OUTCOME_UNKNOWN', 'BEFORE_SEND_FAILED'] as const);

/** Whether a request answered with `code` may succeed if sent again later (see RETRYABLE_CODES). */
export function isRetryable(code: string): boolean {
  return (RETRYABLE_CODES as readonly string[]).includes(code);
}

/** The close codes the service ends a socket with. */
export const CloseCode = Object.freeze({
  SHUTDOWN: 4000,
  SLOW_CONSUMER: 4001,
  UNAVAILABLE: 4002,
  USER_CEILING_REACHED: 4010,
  IGNORED_RETRY_HINTS: 4029,
  TOKEN_EXPIRED: 4100,
  USER_DELETED: 4500,
  APP_DELETED: 4501,
  USER_BANNED: 4502,
} as const);

/** What a close code tells a client to do, by its range (the README's "WebSocket protocol"). */
export type CloseAction = 'reconnect' | 'refresh-then-reconnect' | 'stop' | 'unknown';

export function closeAction(code: number): CloseAction {
  // 4000–4099: reconnect (after `retryAfter` when the reason carries one), then resume.
  if (code >= 4000 && code < 4100) return 'reconnect';
  // 4100–4199: fix the cause (a stale token: refresh it), then reconnect.
  if (code >= 4100 && code < 4200) return 'refresh-then-reconnect';
  // 4500–4599: the session is over (user or application deleted, user banned): never reconnect.
  if (code >= 4500 && code < 4600) return 'stop';
  return 'unknown';
}
