/**
 * Messages on the cluster-wide control topic: a discriminated union on `type`, sent as JSON with a
 * protocol version. Every node subscribes to the control topic for its whole life; any process
 * that can reach the transport may publish (the control service announces revocations as a
 * publisher with its own origin id).
 *
 * Control messages ride the bus, so they are at most once like everything on it: a node that
 * misses a revocation still sees it when its cached key status expires (KEY_STATUS_TTL_MS). The
 * bus only makes the common case immediate.
 */
export const CONTROL_PROTOCOL_VERSION = 1;

export type ControlMessage =
  /** An API key was revoked (or its application deleted): drop its cached status at once. */
  | { type: 'apiKey.revoked'; appId: string; keyId: string }
  /** An application was deleted: refuse its users' sessions and close their sockets at once. */
  | { type: 'app.deleted'; appId: string }
  /** A node is shutting down gracefully: re-read the live node list now rather than at expiry. */
  | { type: 'node.leaving'; nodeId: string }
  /** An application's webhook endpoints or before-send hook changed: drop their cached copies. */
  | { type: 'webhooks.changed'; appId: string }
  /** An application's attachment settings changed: drop the cached copy. */
  | { type: 'attachmentSettings.changed'; appId: string }
  | { type: 'pushSettings.changed'; appId: string }
  /** An upload was finalized or refused: the node that took it stops holding its size against the application's total. */
  | { type: 'upload.released'; appId: string; uploadId: string }
  /** An application's blocklist changed: read it again before its next use. */
  | { type: 'blocklist.changed'; appId: string }
  /**
   * A user was banned or unbanned: drop its cached ban status; on a ban, close its sockets once the
   * store confirms it (anything that can publish here could say anything).
   */
  | { type: 'user.banned' | 'user.unbanned'; appId: string; userId: string }
  /** A user blocked or unblocked another: drop what is cached of the pair. */
  | { type: 'user.blocks.changed'; appId: string; userId: string; otherId: string };

export function encodeControl(message: ControlMessage): string {
  return JSON.stringify({ v: CONTROL_PROTOCOL_VERSION, ...message });
}

const isString = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

/**
 * The message in a control payload, or undefined for anything else: another version, a type this
 * node does not know (a newer node's), or missing fields. Unknown messages are ignored, not errors,
 * so nodes of two versions coexist during a rolling upgrade.
 */
export function decodeControl(payload: Uint8Array | string): ControlMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const m = value as { v?: unknown; type?: unknown; appId?: unknown; keyId?: unknown; nodeId?: unknown; userId?: unknown; otherId?: unknown; uploadId?: unknown };
  if (m.v !== CONTROL_PROTOCOL_VERSION) return undefined;
  const type = m.type as ControlMessage['type'];
  switch (type) {
    case 'apiKey.revoked':
      return isString(m.appId) && isString(m.keyId) ? { type, appId: m.appId, keyId: m.keyId } : undefined;
    case 'app.deleted':
    case 'webhooks.changed':
    case 'blocklist.changed':
    case 'attachmentSettings.changed':
    case 'pushSettings.changed':
      return isString(m.appId) ? { type, appId: m.appId } : undefined;
    case 'upload.released':
      return isString(m.appId) && isString(m.uploadId) ? { type, appId: m.appId, uploadId: m.uploadId } : undefined;
    case 'user.banned':
    case 'user.unbanned':
      return isString(m.appId) && isString(m.userId) ? { type, appId: m.appId, userId: m.userId } : undefined;
    case 'user.blocks.changed':
      return isString(m.appId) && isString(m.userId) && isString(m.otherId) ? { type, appId: m.appId, userId: m.userId, otherId: m.otherId } : undefined;
    case 'node.leaving':
      return isString(m.nodeId) ? { type, nodeId: m.nodeId } : undefined;
    default:
      // A type from a newer node, or garbage.
      return undefined;
  }
}

