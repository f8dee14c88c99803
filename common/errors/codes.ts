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
  AUTH_REQUIRED: { status: 401, title: 'Authentication required' },
  TOKEN_INVALID: { status: 401, title: 'Token is invalid' },
  TOKEN_EXPIRED: { status: 401, title: 'Token has expired' },
  INVALID_CREDENTIALS: { status: 401, title: 'E-mail or password is wrong' },
  REFRESH_TOKEN_INVALID: { status: 401, title: 'Refresh token is invalid or expired' },
  REFRESH_TOKEN_REUSED: { status: 401, title: 'Refresh token was already used; the session is revoked' },
  API_KEY_INVALID: { status: 401, title: 'API key is invalid, revoked or for another cluster' },
  NOT_ALLOWED: { status: 403, title: 'Your role in this chat does not allow this' },
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
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed on this route' },
  ACCOUNT_EXISTS: { status: 409, title: 'An account with this e-mail already exists' },
  APP_SUSPENDED: { status: 409, title: 'Application is suspended' },
  KEY_REVOKED: { status: 409, title: 'API key is revoked' },
  APP_LIMIT_REACHED: { status: 403, title: 'Application limit reached' },
  KEY_LIMIT_REACHED: { status: 403, title: 'Active API key limit reached' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Request body too large' },
  FRAME_TOO_LARGE: { status: 413, title: 'WebSocket frame too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Request body must be application/json' },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  TOO_MANY_CONNECTIONS: { status: 429, title: 'Too many open connections for this user' },
  INTERNAL: { status: 500, title: 'Internal error' },
  UNAVAILABLE: { status: 503, title: 'A backend is unavailable' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof errorCodes;
