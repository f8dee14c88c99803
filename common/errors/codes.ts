/**
 * The one table of client-facing error codes, shared by the control service and the cluster nodes.
 * Every problem response carries one of these codes; the README's error table is checked against
 * this table by a test, so adding a code means documenting it.
 */
export const errorCodes = {
  MALFORMED_JSON: { status: 400, title: 'Request body is not valid JSON' },
  MALFORMED_FRAME: { status: 400, title: 'WebSocket frame is not valid JSON or MessagePack' },
  UNKNOWN_ACTION: { status: 400, title: 'Unknown WebSocket action type' },
  VALIDATION_FAILED: { status: 400, title: 'Request does not match the schema' },
  CONTENT_BLOCKED: { status: 400, title: "The message contains a word or phrase the application's blocklist refuses" },
  AUTH_REQUIRED: { status: 401, title: 'Authentication required' },
  TOKEN_INVALID: { status: 401, title: 'Token is invalid' },
  TOKEN_EXPIRED: { status: 401, title: 'Token has expired' },
  INVALID_CREDENTIALS: { status: 401, title: 'E-mail or password is wrong' },
  REFRESH_TOKEN_INVALID: { status: 401, title: 'Refresh token is invalid or expired' },
  REFRESH_TOKEN_REUSED: { status: 401, title: 'Refresh token was already used; the session is revoked' },
  API_KEY_INVALID: { status: 401, title: 'API key is invalid, revoked or for another cluster' },
  NOT_ALLOWED: { status: 403, title: 'Your role in this chat does not allow this' },
  USER_BANNED: { status: 403, title: 'The user is banned from this application' },
  USER_BLOCKED: { status: 403, title: 'One of the two users blocks the other' },
  USER_MUTED: { status: 403, title: 'You are muted in this chat' },
  MEMBER_BANNED: { status: 403, title: 'The user is banned from this chat' },
  BLOCK_LIMIT_REACHED: { status: 403, title: 'The user blocks the most users allowed' },
  CHAT_NOT_ACCESSIBLE: { status: 400, title: 'Chat does not exist or you are not a member' },
  ROUTE_NOT_FOUND: { status: 404, title: 'No such route' },
  USER_NOT_FOUND: { status: 404, title: 'User not found' },
  CHAT_NOT_FOUND: { status: 404, title: 'Chat not found' },
  MESSAGE_NOT_FOUND: { status: 404, title: 'Message not found' },
  USERNAME_TAKEN: { status: 409, title: 'Username is taken in this application' },
  MESSAGE_DELETED: { status: 409, title: 'Message is deleted' },
  MEMBER_LIMIT_REACHED: { status: 403, title: 'Chat member limit reached' },
  CHAT_LIMIT_REACHED: { status: 403, title: 'A user is in the most chats allowed' },
  MFA_CODE_INVALID: { status: 400, title: 'The authenticator or recovery code is wrong or was used already' },
  MFA_ALREADY_ENABLED: { status: 409, title: 'Multi-factor sign-in is already on' },
  MFA_NOT_PENDING: { status: 409, title: 'No multi-factor enrolment is waiting to be confirmed' },
  MFA_NOT_ENABLED: { status: 409, title: 'Multi-factor sign-in is not on' },
  APP_NOT_FOUND: { status: 404, title: 'Application not found' },
  KEY_NOT_FOUND: { status: 404, title: 'API key not found' },
  WEBHOOK_NOT_FOUND: { status: 404, title: 'Webhook endpoint not found' },
  WEBHOOK_DELIVERY_NOT_FOUND: { status: 404, title: 'Webhook delivery attempt not found' },
  BEFORE_SEND_NOT_FOUND: { status: 404, title: 'The application has no before-send hook' },
  BAN_NOT_FOUND: { status: 404, title: 'The user has no ban in force' },
  SIGNED_URL_INVALID: { status: 403, title: 'The signed URL is not valid for this request' },
  SIGNED_URL_EXPIRED: { status: 403, title: 'The signed URL has expired' },
  FILE_NOT_FOUND: { status: 404, title: 'File not found' },
  BLOCK_NOT_FOUND: { status: 404, title: 'You do not block this user' },
  MUTE_NOT_FOUND: { status: 404, title: 'The member has no mute in force' },
  FLAG_NOT_FOUND: { status: 404, title: 'No open flag with this id' },
  ALREADY_FLAGGED: { status: 409, title: 'You flagged this message already' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed on this route' },
  ACCOUNT_EXISTS: { status: 409, title: 'An account with this e-mail already exists' },
  APP_SUSPENDED: { status: 409, title: 'Application is suspended' },
  KEY_REVOKED: { status: 409, title: 'API key is revoked' },
  APP_LIMIT_REACHED: { status: 403, title: 'Application limit reached' },
  KEY_LIMIT_REACHED: { status: 403, title: 'Active API key limit reached' },
  WEBHOOK_LIMIT_REACHED: { status: 403, title: 'Webhook endpoint limit reached' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Request body too large' },
  FRAME_TOO_LARGE: { status: 413, title: 'WebSocket frame too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Request body must be application/json' },
  MESSAGE_REJECTED: { status: 422, title: "The application's before-send hook rejected the message" },
  RATE_LIMITED: { status: 429, title: 'Too many requests', retryable: true },
  TOO_MANY_CONNECTIONS: { status: 429, title: 'Too many open connections for this user' },
  INTERNAL: { status: 500, title: 'Internal error' },
  UNAVAILABLE: { status: 503, title: 'A backend is unavailable', retryable: true },
  OUTCOME_UNKNOWN: { status: 503, title: 'The write may or may not have been stored; retry it with the same idempotency key', retryable: true },
  BEFORE_SEND_FAILED: { status: 503, title: "The application's before-send hook did not answer", retryable: true },
} as const satisfies Record<string, { status: number; title: string; retryable?: true }>;

export type ErrorCode = keyof typeof errorCodes;

/**
 * The codes whose request may succeed later unchanged (after `Retry-After` when it is given):
 * a limit, an overload or a backend that is down. Every other code answers what the request is,
 * so sending it again gets the same answer; INTERNAL is a bug, which a retry only repeats.
 */
export type RetryableCode = { [K in ErrorCode]: (typeof errorCodes)[K] extends { retryable: true } ? K : never }[ErrorCode];
