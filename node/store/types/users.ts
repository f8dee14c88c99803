/**
 * Chat users and their refresh-token families. What every store interface promises: ../types.ts.
 */

import type { EventOptions } from './chats.ts';

export interface ChatUser {
  appId: string;
  id: string;
  /** Unique per application; the integrator's handle for the user. */
  username: string;
  displayName: string;
  createdAt: string;
  updatedAt: string;
  /** The application's own data (README, "Custom data"), as given; absent when none. */
  data?: Record<string, unknown>;
}

export interface UserSessionFamily {
  appId: string;
  id: string;
  userId: string;
  expiresAt: string;
  revokedAt?: string;
}

export interface UserRefreshToken {
  appId: string;
  hash: string;
  familyId: string;
  userId: string;
  expiresAt: string;
  usedAt?: string;
}

export type UserRotateResult =
  | { kind: 'rotated'; userId: string; familyId: string }
  | { kind: 'reused'; familyId: string }
  | { kind: 'invalid' };

export interface UserStore {
  /** Atomic on (appId, username). `events` are written only with 'created' (see EventOptions). */
  create(user: ChatUser, options?: EventOptions): Promise<'created' | 'exists'>;
  get(appId: string, userId: string): Promise<ChatUser | undefined>;
  getByUsername(appId: string, username: string): Promise<ChatUser | undefined>;
  update(user: ChatUser): Promise<'updated' | 'not-found'>;
  /** Removes the user and frees the username; sessions are revoked by the caller. */
  delete(appId: string, userId: string, options?: EventOptions): Promise<'deleted' | 'not-found'>;
}

/** Chat users' refresh-token families, with the same rotation and reuse rules as dashboard sessions. */
export interface UserSessionStore {
  createFamily(family: UserSessionFamily, first: UserRefreshToken): Promise<void>;
  getFamily(appId: string, id: string): Promise<UserSessionFamily | undefined>;
  /**
   * Atomically: if `oldHash` is unused, unexpired and its family live, mark it used and store
   * `nextHash` in the same family with the same expiry ('rotated'); if it was already used, revoke
   * the family ('reused').
   */
  rotate(appId: string, oldHash: string, nextHash: string, now: string): Promise<UserRotateResult>;
  revokeAllForUser(appId: string, userId: string, now: string): Promise<void>;
  /**
   * Forgets families and tokens whose expiry is before `now` (an expired sign-in can never be used
   * again), so sign-ins cost storage only while they can be used. Stores that expire rows by
   * themselves (Cassandra TTLs) may do nothing here. Resolves with how many records were removed.
   */
  sweepExpired(now: string): Promise<number>;
}
