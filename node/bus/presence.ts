/**
 * Which users have a live connection anywhere in the cluster. Each connection is an entry owned by
 * the node holding its socket; the node renews its entries by heartbeat, and an entry not renewed
 * for the TTL expires, so the connections of a node that dies without a word go offline by
 * themselves within one TTL.
 *
 * Guarantees:
 * - online() and offline() are atomic per user: of any set of concurrent calls, exactly one
 *   online() reports the user's first live connection and exactly one offline() the end of the
 *   last, so a presence.online / presence.offline event is produced once per transition;
 * - a connection is seen as live from online() until offline(), or until one TTL after its node's
 *   last successful heartbeat; isOnline() never counts an expired connection;
 * - a user whose connections all expire (their node died) produces no offline() transition:
 *   readers see isOnline() turn false, but nobody is told;
 * - nothing is retried: a failed call rejects with BackendUnavailableError (the heartbeat restores
 *   the entries of live connections on its next beat); heartbeat failures are logged.
 */
export interface Presence {
  /** Marks a connection live; resolves true when it is the user's only live connection. */
  online(appId: string, userId: string, nodeId: string, connId: string): Promise<boolean>;
  /** Ends a connection; resolves true when this call ended the user's last live connection. */
  offline(appId: string, userId: string, nodeId: string, connId: string): Promise<boolean>;
  isOnline(appId: string, userId: string): Promise<boolean>;
  /** The distinct users of an application with a live connection on any node. */
  usersOnline(appId: string): Promise<ReadonlySet<string>>;
  /** Stops heartbeating and ends this instance's connections at once (graceful shutdown). */
  close(): Promise<void>;
}
