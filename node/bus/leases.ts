/** A member of a lease set and the value stored with it ('' when there is none). */
export interface Lease {
  member: string;
  value: string;
}

/** Live members of a key just before and just after a change, observed atomically with it. */
export interface LeaseCounts {
  before: number;
  after: number;
}

/**
 * Sets of members that expire unless renewed: the storage under presence and node membership,
 * and the only part of them that differs between the in-memory and the Redis deployment.
 *
 * Guarantees:
 * - a member is live from a renewal until `ttlMs` later by the store's clock (one clock for all
 *   nodes, Redis's in a cluster: node clocks may disagree without changing who is live);
 * - each call is atomic per key: its counts are those immediately before and after it, with no
 *   other call between, so of concurrent calls exactly one sees a key go from 0 live members to
 *   some, and exactly one sees it go back to 0;
 * - calls on one store take effect in the order they are made (one connection, in order);
 * - expired members are never counted nor listed; their storage is reclaimed lazily.
 *
 * Failures reject with BackendUnavailableError; nothing is retried here.
 */
export interface Leases {
  /** Makes each member live for `ttlMs` from now, storing its value; adds members not present. */
  renew(key: string, leases: readonly Lease[], ttlMs: number): Promise<LeaseCounts>;
  /** Ends members' leases at once. */
  remove(key: string, members: readonly string[]): Promise<LeaseCounts>;
  /** Live members with their values, ordered by member. */
  live(key: string): Promise<Lease[]>;
  count(key: string): Promise<number>;
  close(): Promise<void>;
}
