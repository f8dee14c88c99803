import type { BrowserContext, Page } from 'playwright-core';
import type { BrowserSubscription } from '../helpers/push-service.ts';
import { eventually } from '../helpers/push-peers.ts';

/**
 * What a browser's push machinery does, for the reference app's tests. Headless Chromium cannot
 * reach its vendor's push service (Google's) from here, so `pushManager.subscribe` could never
 * answer; the tests' own push service (test/helpers/push-service.ts) takes its place, and the
 * browser hands the pushes it receives to the app's real service worker.
 */

/** Where the stand-in keeps "subscribed", by key: a real subscription outlives its tab, so this one does too. */
const STORE = 'test-push-subscription';

/**
 * Replaces PushManager's `subscribe` and `getSubscription` in every page of `context` (an init
 * script, before the app runs) with ones that answer with `subscription` of the local push
 * service: `toJSON()` gives `{endpoint, expirationTime: null, keys}`, and `options` the key it was
 * made with, as a real one does. The app passes the key as base64url, as the Push API allows.
 */
export async function standInPushService(context: BrowserContext, subscription: BrowserSubscription): Promise<void> {
  // Methods, not named arrow functions: tsx (esbuild, keepNames) wraps those in a __name helper
  // the page does not have.
  await context.addInitScript(
    ({ endpoint, keys, store }) => {
      const stub = {
        bytes(base64url: string) {
          return Uint8Array.from(atob(base64url.replaceAll('-', '+').replaceAll('_', '/')), (c) => c.charCodeAt(0)).buffer;
        },
        made(key: string) {
          return {
            endpoint,
            expirationTime: null,
            options: { userVisibleOnly: true, applicationServerKey: stub.bytes(key) },
            getKey(name: 'p256dh' | 'auth') {
              return stub.bytes(keys[name]);
            },
            toJSON() {
              return { endpoint, expirationTime: null, keys };
            },
            async unsubscribe() {
              localStorage.removeItem(store);
              return true;
            },
          };
        },
      };
      PushManager.prototype.subscribe = async function (options?: PushSubscriptionOptionsInit) {
        const key = options?.applicationServerKey;
        if (typeof key !== 'string' || options?.userVisibleOnly !== true) throw new TypeError('the stand-in takes {userVisibleOnly: true, applicationServerKey: base64url}');
        localStorage.setItem(store, key);
        return stub.made(key) as unknown as PushSubscription;
      };
      PushManager.prototype.getSubscription = async function () {
        const key = localStorage.getItem(store);
        return (key ? stub.made(key) : null) as unknown as PushSubscription | null;
      };
    },
    { endpoint: subscription.endpoint, keys: subscription.keys, store: STORE },
  );
}

/** The VAPID key the page subscribed with (base64url), or null when it holds no subscription. */
export const subscribedKey = (page: Page) => page.evaluate((store) => localStorage.getItem(store), STORE);

export interface ShownNotification {
  title: string;
  body: string;
  tag: string;
  data: unknown;
}

/**
 * A tab of the app's origin that does not run the app (it shows /sw.js: no connection to the chat
 * service), with DevTools' ServiceWorker domain: `push` hands a payload to the app's service worker
 * as the browser does when its push service delivers one (the DevTools "Push" button), `shown`
 * lists the notifications the worker shows, `click` dispatches a notificationclick to it.
 */
export async function workerTab(context: BrowserContext, appUrl: string) {
  const origin = new URL(appUrl).origin;
  const page = await context.newPage();
  await page.goto(`${origin}/sw.js`);
  const cdp = await context.newCDPSession(page);
  const registrations = new Map<string, string>();
  cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => {
    for (const r of e.registrations) if (r.scopeURL === `${origin}/` && !r.isDeleted) registrations.set(r.scopeURL, r.registrationId);
  });
  await cdp.send('ServiceWorker.enable');
  await eventually(() => registrations.size > 0, 5_000, "the app's service worker registration");
  const shown = (): Promise<ShownNotification[]> =>
    page.evaluate(async () => {
      const registration = await navigator.serviceWorker.getRegistration('/');
      return (await registration!.getNotifications()).map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data as unknown }));
    });
  return {
    page,
    shown,
    async push(payload: string): Promise<void> {
      await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId: registrations.get(`${origin}/`)!, data: payload });
    },
    /**
     * A click on the notification of `tag`, as an event made by script in the worker (no one can
     * click a headless browser's notification): its handler runs, but the browser lets only a real
     * click focus or open a window, and refuses `waitUntil`.
     */
    async click(tag: string): Promise<void> {
      const worker = context.serviceWorkers().filter((w) => w.url() === `${origin}/sw.js`).at(-1);
      if (!worker) throw new Error('the service worker is not running');
      await worker.evaluate(async (tag) => {
        const scope = self as unknown as { registration: ServiceWorkerRegistration; dispatchEvent(event: Event): boolean };
        const { NotificationEvent } = globalThis as unknown as { NotificationEvent: new (type: string, init: { notification: Notification }) => Event };
        const [notification] = await scope.registration.getNotifications({ tag });
        if (!notification) throw new Error(`no notification tagged ${tag}`);
        scope.dispatchEvent(new NotificationEvent('notificationclick', { notification }));
      }, tag);
    },
  };
}
