import { ChatApiError, type ChatClient } from '../../sdk/client.ts';
import { describe } from './conversation-state.ts';
import type { OpenChatMessage } from './sw.ts';

/**
 * Where this browser's notifications stand for the signed-in user:
 * - `unsupported`: no service worker or Push API here (the page is not on https or localhost, or
 *   the browser has no push);
 * - `not-configured`: the application has not set Web Push (PUSH_NOT_CONFIGURED);
 * - `blocked`: the user said no to notifications for this site (only the browser's site settings
 *   can undo it);
 * - `on`: this browser's subscription is one of the user's push devices.
 */
export type NotificationsStatus =
  | { kind: 'checking' | 'unsupported' | 'not-configured' | 'blocked' | 'off' | 'working' }
  | { kind: 'on'; deviceId: string }
  | { kind: 'failed'; reason: string };

/** How long signing out waits for the device to be removed: it never hangs on the network. */
const FORGET_MS = 2000;

const supported = () => 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;

/** Whether a subscription was made with `key` (base64url), the application's VAPID key now. */
function madeWith(subscription: PushSubscription, key: string): boolean {
  const used = subscription.options?.applicationServerKey;
  if (!used) return true;
  const bytes = new Uint8Array(used);
  return btoa(String.fromCharCode(...bytes)).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '') === key;
}

/**
 * Push notifications for the signed-in user (README, "Push notifications"): turning them on
 * registers the service worker (/sw.js), subscribes this browser with the application's VAPID key
 * and registers the subscription as a push device; off removes the device and the subscription.
 * The per-chat "mute notifications" setting is the user's on the service, for every device.
 */
export class PushState {
  status: NotificationsStatus = { kind: 'checking' };
  /** Chats' mute settings as read or set; a chat not here has not been read yet. */
  readonly muted = new Map<string, boolean>();
  muteError: { chatId: string; reason: string } | undefined;

  constructor(
    private readonly client: ChatClient,
    private readonly changed: () => void,
    private readonly openChat: (chatId: string) => void,
  ) {
    if ('serviceWorker' in navigator) navigator.serviceWorker.addEventListener('message', this.onWorkerMessage);
  }

  private set(status: NotificationsStatus): void {
    this.status = status;
    this.changed();
  }

  /** Reads where things stand, without asking the user anything: called once signed in. */
  async check(): Promise<void> {
    if (!supported()) return this.set({ kind: 'unsupported' });
    if (Notification.permission === 'denied') return this.set({ kind: 'blocked' });
    try {
      const key = await this.client.push.webPushKey();
      const registration = await navigator.serviceWorker.getRegistration('/');
      const subscription = await registration?.pushManager.getSubscription();
      const device = subscription && madeWith(subscription, key) ? (await this.client.push.devices()).find((d) => d.endpoint === subscription.endpoint) : undefined;
      this.set(device ? { kind: 'on', deviceId: device.deviceId } : { kind: 'off' });
    } catch (error) {
      this.failed(error);
    }
  }

  /**
   * Asks for permission (the button's click is the gesture browsers require), registers the
   * worker, subscribes with the application's key and registers the subscription. A subscription
   * made with an older key (Web Push removed and set again makes a new pair) is replaced.
   */
  async turnOn(): Promise<void> {
    if (!supported()) return this.set({ kind: 'unsupported' });
    this.set({ kind: 'working' });
    try {
      const permission = await Notification.requestPermission();
      if (permission === 'denied') return this.set({ kind: 'blocked' });
      if (permission !== 'granted') return this.set({ kind: 'failed', reason: 'the browser did not give permission to show notifications' });
      const key = await this.client.push.webPushKey();
      await navigator.serviceWorker.register('/sw.js');
      const registration = await navigator.serviceWorker.ready;
      const old = await registration.pushManager.getSubscription();
      if (old && !madeWith(old, key)) await old.unsubscribe();
      const subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
      const device = await this.client.push.register(subscription);
      this.set({ kind: 'on', deviceId: device.deviceId });
    } catch (error) {
      this.failed(error);
    }
  }

  /** Removes the push device (one already gone, after its push service said so, is fine) and the subscription. */
  async turnOff(): Promise<void> {
    const was = this.status;
    this.set({ kind: 'working' });
    try {
      if (was.kind === 'on') {
        await this.client.push.unregister(was.deviceId).catch((error: unknown) => {
          if (!(error instanceof ChatApiError && error.code === 'PUSH_DEVICE_NOT_FOUND')) throw error;
        });
      }
      const registration = await navigator.serviceWorker.getRegistration('/');
      await (await registration?.pushManager.getSubscription())?.unsubscribe();
      this.set({ kind: 'off' });
    } catch (error) {
      this.failed(error);
    }
  }

  /**
   * Before signing out: this browser stops getting the user's pushes, which a shared browser would
   * otherwise show to whoever uses it next. A sign-out the service ended cannot do this.
   */
  async forget(): Promise<void> {
    if (this.status.kind !== 'on') return;
    await Promise.race([this.turnOff(), new Promise((resolve) => setTimeout(resolve, FORGET_MS))]);
  }

  private failed(error: unknown): void {
    if (error instanceof ChatApiError && error.code === 'PUSH_NOT_CONFIGURED') return this.set({ kind: 'not-configured' });
    // subscribe() refuses with NotAllowedError when the permission was taken back meanwhile.
    if (error instanceof DOMException && error.name === 'NotAllowedError') return this.set({ kind: 'blocked' });
    this.set({ kind: 'failed', reason: describe(error) });
  }

  /** Reads whether the user muted a chat's notifications (once per chat and page). */
  async loadMute(chatId: string): Promise<void> {
    if (this.muted.has(chatId)) return;
    try {
      this.muted.set(chatId, await this.client.push.chatMuted(chatId));
      this.changed();
    } catch {
      // The toggle stays hidden: the chat works without it.
    }
  }

  async setMute(chatId: string, muted: boolean): Promise<void> {
    try {
      this.muted.set(chatId, (await this.client.push.muteChat(chatId, muted)).muted);
      this.muteError = undefined;
    } catch (error) {
      this.muteError = { chatId, reason: describe(error) };
    }
    this.changed();
  }

  /**
   * The chat a notification's click asked for: `?chat=` when the worker opened a new tab (taken
   * off the address, so a reload does not open it again), to open once the chats are loaded.
   */
  chatFromAddress(): string | undefined {
    const url = new URL(location.href);
    const chatId = url.searchParams.get('chat') ?? undefined;
    if (chatId) {
      url.searchParams.delete('chat');
      history.replaceState(null, '', url);
    }
    return chatId;
  }

  close(): void {
    if ('serviceWorker' in navigator) navigator.serviceWorker.removeEventListener('message', this.onWorkerMessage);
  }

  /** A notification was clicked while this tab was open. */
  private readonly onWorkerMessage = (event: MessageEvent): void => {
    const message = event.data as OpenChatMessage | undefined;
    if (message?.type === 'open-chat' && typeof message.chatId === 'string') this.openChat(message.chatId);
  };
}
