/**
 * Where a push reaches one of a user's devices (README, "Push notifications"): a Web Push
 * subscription (RFC 8030: the push service's endpoint, and the browser's keys for RFC 8291's
 * encryption), or an APNs or FCM token.
 */
export type PushAddress = { kind: 'webPush'; endpoint: string; p256dh: string; auth: string } | { kind: 'apns'; token: string } | { kind: 'fcm'; token: string };

export interface PushDevice {
  appId: string;
  userId: string;
  deviceId: string;
  address: PushAddress;
  createdAt: string;
}

/** What names a device's address, whatever its keys: a Web Push endpoint, or a provider's token. */
export const addressIdentity = (a: PushAddress): string => (a.kind === 'webPush' ? `webPush ${a.endpoint}` : `${a.kind} ${a.token}`);

/**
 * Each user's push devices, at most a few (the caller's `max`). An address belongs to one user of
 * an application at a time: registering it for another user (a browser or phone signed in to
 * another account) moves it, so no push for the first reaches the second.
 */
export interface PushDeviceStore {
  /**
   * Registers `device` unless its user has `max` devices already. The same address again is the
   * device registered before (its id and time kept, a Web Push subscription's keys replaced):
   * 'exists'. On Cassandra two registrations racing past `max` may both be refused.
   */
  register(device: PushDevice, max: number): Promise<{ result: 'created' | 'exists'; device: PushDevice } | { result: 'limit' }>;
  /** The user's devices, oldest first. */
  list(appId: string, userId: string): Promise<PushDevice[]>;
  remove(appId: string, userId: string, deviceId: string): Promise<'removed' | 'not-found'>;
  /** Whether the user turned off pushes of the chat (a chat's "mute notifications"; off by default). */
  chatMuted(appId: string, userId: string, chatId: string): Promise<boolean>;
  /** Turns pushes of the chat off (`muted`) or on again for the user; its other chats are untouched. */
  muteChat(appId: string, userId: string, chatId: string, muted: boolean): Promise<void>;
}
