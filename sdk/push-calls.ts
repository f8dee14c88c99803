import type { RequestOptions } from './http.ts';

type Call = <T>(path: string, init?: Omit<RequestOptions, 'token'>) => Promise<T>;

/** A device pushes reach (README, "Push notifications"). */
export interface PushDevice {
  deviceId: string;
  kind: 'webPush' | 'apns' | 'fcm';
  /** A Web Push device's push service URL. */
  endpoint?: string;
  /** An APNs or FCM device's token. */
  token?: string;
  createdAt: string;
}

/** What `register` takes: a browser's `PushSubscription` (or its `toJSON()`), or `{apns: token}` / `{fcm: token}`. */
export type PushTarget = { toJSON(): unknown } | { endpoint: string; keys: { p256dh: string; auth: string } } | { apns: string } | { fcm: string };

/**
 * The user's push devices (README, "Push notifications"): the application's VAPID key to subscribe
 * a browser with, and registering, listing and removing devices (at most 10). ChatClient.push.
 */
export class PushCalls {
  constructor(private readonly call: Call) {}

  /**
   * The application's VAPID public key (base64url), for `pushManager.subscribe({userVisibleOnly:
   * true, applicationServerKey})`; PUSH_NOT_CONFIGURED when the application has not set Web Push.
   */
  async webPushKey(): Promise<string> {
    return (await this.call<{ publicKey: string }>('api/push/web-push-key')).publicKey;
  }

  /** Registers a device; the same subscription or token again is the same device. PUSH_DEVICE_LIMIT_REACHED past 10. */
  register(target: PushTarget): Promise<PushDevice> {
    let body: unknown;
    if ('apns' in target) body = { apns: { token: target.apns } };
    else if ('fcm' in target) body = { fcm: { token: target.fcm } };
    else {
      const json = ('toJSON' in target ? target.toJSON() : target) as { endpoint: string; keys: { p256dh: string; auth: string }; expirationTime?: number | null };
      body = { webPush: { endpoint: json.endpoint, keys: { p256dh: json.keys.p256dh, auth: json.keys.auth }, ...(json.expirationTime !== undefined ? { expirationTime: json.expirationTime } : {}) } };
    }
    return this.call('api/push/devices', { method: 'POST', body });
  }

  /** The user's devices, oldest first. */
  async devices(): Promise<PushDevice[]> {
    return (await this.call<{ devices: PushDevice[] }>('api/push/devices')).devices;
  }

  /** Removes a device: nothing more is pushed to it. PUSH_DEVICE_NOT_FOUND when it is not yours. */
  async unregister(deviceId: string): Promise<void> {
    await this.call(`api/push/devices/${encodeURIComponent(deviceId)}`, { method: 'DELETE' });
  }

  /** Turns pushes of a chat off (`muted`) or on again, for this user only. CHAT_NOT_FOUND when not a member. */
  async muteChat(chatId: string, muted: boolean): Promise<{ chatId: string; muted: boolean }> {
    return this.call(`api/push/chats/${encodeURIComponent(chatId)}`, { method: 'PUT', body: { muted } });
  }

  /** Whether this user turned off pushes of a chat. */
  async chatMuted(chatId: string): Promise<boolean> {
    return (await this.call<{ muted: boolean }>(`api/push/chats/${encodeURIComponent(chatId)}`)).muted;
  }
}
