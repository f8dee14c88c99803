import { notificationFor } from './push-notification.ts';

/**
 * The reference app's service worker, served as /sw.js (demo/serve.ts bundles it): it shows the
 * chat service's pushes as notifications while no tab of the app is open, and a click on one
 * opens the app at its chat. It holds no session, so a private-mode push (ids only) shows a
 * generic notification rather than fetching the message.
 */

// The project's TypeScript has the DOM types, not the worker ones: the few this file uses.
interface WindowClient {
  url: string;
  focused: boolean;
  visibilityState: DocumentVisibilityState;
  postMessage(message: unknown): void;
  focus(): Promise<WindowClient>;
}
interface ExtendableEvent extends Event {
  waitUntil(work: Promise<unknown>): void;
}
interface PushEvent extends ExtendableEvent {
  data: { json(): unknown } | null;
}
interface NotificationEvent extends ExtendableEvent {
  notification: Notification;
}
interface WorkerScope {
  registration: ServiceWorkerRegistration;
  clients: {
    matchAll(options: { type: 'window'; includeUncontrolled: boolean }): Promise<WindowClient[]>;
    openWindow(url: string): Promise<WindowClient | null>;
    claim(): Promise<void>;
  };
  skipWaiting(): Promise<void>;
  addEventListener(type: 'install' | 'activate', listener: (event: ExtendableEvent) => void): void;
  addEventListener(type: 'push', listener: (event: PushEvent) => void): void;
  addEventListener(type: 'notificationclick', listener: (event: NotificationEvent) => void): void;
}

/** What a tab of the app listens for (push-state.ts): open this chat. */
export interface OpenChatMessage {
  type: 'open-chat';
  chatId: string;
}

const worker = self as unknown as WorkerScope;

// A new version takes over at once: the demo has no state in the worker to migrate.
worker.addEventListener('install', () => void worker.skipWaiting());
worker.addEventListener('activate', (event) => event.waitUntil(worker.clients.claim()));

worker.addEventListener('push', (event) => {
  let payload: unknown;
  try {
    payload = event.data?.json();
  } catch {
    // Not JSON: still a push the user must see (userVisibleOnly), as a generic notification.
  }
  const { title, options } = notificationFor(payload);
  event.waitUntil(worker.registration.showNotification(title, options));
});

worker.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const chatId = (event.notification.data as { chatId?: string } | null)?.chatId;
  event.waitUntil(openAt(chatId));
});

/**
 * Brings the app to the front at `chatId`: a tab already open is asked to open the chat and is
 * focused (the visible one first); with none, a new tab opens at `/?chat=`. Each tab opens the chat
 * only when it is one of its own: the demo lets two tabs be two users.
 */
async function openAt(chatId: string | undefined): Promise<void> {
  const tabs = await worker.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const front = tabs.find((t) => t.focused) ?? tabs.find((t) => t.visibilityState === 'visible') ?? tabs[0];
  if (!front) {
    await worker.clients.openWindow(chatId ? `/?chat=${encodeURIComponent(chatId)}` : '/');
    return;
  }
  if (chatId) for (const tab of tabs) tab.postMessage({ type: 'open-chat', chatId } satisfies OpenChatMessage);
  await front.focus();
}
