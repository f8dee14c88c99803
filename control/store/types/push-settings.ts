import type { PushDeliveryRecord, PushSettings } from '../../../common/push/index.ts';

export type { PushDeliveryRecord };

/** The parts of an application's push settings `put` sets, stored apart so that setting one never undoes a concurrent set of another. */
export interface PushPartValues {
  /** `privateMode`. */
  options: boolean;
  apns: NonNullable<PushSettings['apns']>;
  fcm: NonNullable<PushSettings['fcm']>;
}
export type PushWebPart = NonNullable<PushSettings['webPush']>;

/**
 * Each application's push providers (README, "Push notifications"), with their secrets: stored
 * readable, as delivery signs with them (the control store's files are private to the service).
 * Each provider is a part of its own: a set replaces that part whole (the last set wins) and leaves
 * the others; the Web Push key pair is made once (`createWebPush`: of concurrent creates exactly
 * one wins), as every browser subscription depends on its public key.
 *
 * Beside them, the application's push delivery log: the attempts the nodes made, a record of
 * recent ones, not a ledger. The embedded store keeps each application's newest
 * PUSH_DELIVERIES_KEPT whatever their age; Cassandra keeps every attempt 7 days (TTL) and lists at
 * most the newest PUSH_DELIVERIES_KEPT of them, so a log quiet for a week shows fewer.
 */
export interface PushSettingsStore {
  /** The parts set, assembled (undefined: none). `updatedAt` is the latest of theirs. */
  get(appId: string): Promise<PushSettings | undefined>;
  /** Sets the `apns`, `fcm` or `options` part (`privateMode`), or removes it (undefined). */
  put<P extends keyof PushPartValues>(appId: string, part: P, value: PushPartValues[P] | undefined, updatedAt: string): Promise<void>;
  /** Stores the Web Push part unless there is one: 'exists' leaves the stored one as it is. */
  createWebPush(appId: string, value: PushWebPart, updatedAt: string): Promise<'created' | 'exists'>;
  /** Replaces the Web Push part's subject (its keys never change), or removes the part (undefined). */
  updateWebPush(appId: string, subject: string | undefined, updatedAt: string): Promise<'updated' | 'not-found'>;
  /**
   * Records attempts, of several applications at once. A record is an attempt made, never changed:
   * recorded again (a write retried) it is still one entry, by its id.
   */
  recordDeliveries(records: PushDeliveryRecord[]): Promise<void>;
  /**
   * The application's most recent attempts, newest first (by `at`, then id, both descending), at
   * most `limit` and never more than PUSH_DELIVERIES_KEPT; only the provider's when one is named.
   * A provider's listing is its attempts among the application's newest PUSH_DELIVERIES_KEPT on
   * the embedded store; on Cassandra its own newest PUSH_DELIVERIES_KEPT (within the 7 days).
   */
  deliveries(appId: string, provider: PushDeliveryRecord['provider'] | undefined, limit: number): Promise<PushDeliveryRecord[]>;
  /** Removes every part and the delivery log (with the application). Idempotent. */
  delete(appId: string): Promise<void>;
}
