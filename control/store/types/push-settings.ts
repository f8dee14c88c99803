import type { PushSettings } from '../../../common/push/index.ts';

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
  /** Removes every part (with the application). Idempotent. */
  delete(appId: string): Promise<void>;
}
