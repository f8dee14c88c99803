import type { PushSettings } from '../../common/push/index.ts';
import type { PushDevice } from '../store/index.ts';
import { ApnsSender } from './apns.ts';
import { FcmSender } from './fcm.ts';
import type { PushContent } from './payload.ts';
import { apnsNotification, fcmNotification, webPushMessage } from './payload.ts';
import { WebPushThread } from './web-push-thread.ts';

export type PushProvider = PushDevice['address']['kind'];

/**
 * How one push to one device ended: `sent`; `gone` (the service says the device is no longer
 * there: it is removed); `retry` (429, 5xx, no answer: tried again later); `failed` (refused for
 * good: a bad request or credentials, logged and not retried); `unconfigured` (the application
 * has no such provider any more).
 */
export interface PushOutcome {
  result: 'sent' | 'gone' | 'retry' | 'failed' | 'unconfigured';
  status?: number;
  reason?: string;
  durationMs: number;
}

export interface PushSendersOptions {
  /** Let Web Push reach loopback and private addresses (PUSH_ALLOW_LOOPBACK): tests and development only. */
  allowLoopback: boolean;
  /** Replace Apple's and Google's origins (PUSH_APNS_ORIGIN, PUSH_FCM_ORIGIN): a local relay, or the tests' peers. */
  apnsOrigin?: string;
  fcmOrigin?: string;
  timeoutMs?: number;
}

const transient = (status: number) => status === 429 || status >= 500;

/**
 * The node's clients of the three push services, shared by every application: Web Push on a
 * thread of its own (WebPushThread: encryption and pooled HTTPS whose names are checked where they
 * resolve, so no push reaches a private address, as no webhook does), APNs over one HTTP/2 session
 * per origin, FCM's HTTP v1 API.
 */
export class PushSenders {
  private readonly web: WebPushThread;
  private readonly apns: ApnsSender;
  private readonly fcm: FcmSender;
  private readonly timeoutMs: number;

  constructor(o: PushSendersOptions) {
    this.timeoutMs = o.timeoutMs ?? 10_000;
    this.web = new WebPushThread({ allowLoopback: o.allowLoopback, timeoutMs: this.timeoutMs, inFlight: 64 });
    this.apns = new ApnsSender({ ...(o.apnsOrigin ? { origins: { sandbox: o.apnsOrigin, production: o.apnsOrigin } } : {}), timeoutMs: this.timeoutMs });
    this.fcm = new FcmSender({ ...(o.fcmOrigin ? { origin: o.fcmOrigin } : {}), timeoutMs: this.timeoutMs });
  }

  async send(settings: PushSettings, device: PushDevice, content: PushContent): Promise<PushOutcome> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    const a = device.address;
    try {
      if (a.kind === 'webPush') {
        if (!settings.webPush) return { result: 'unconfigured', durationMs: 0 };
        const r = await this.web.send({ address: a, vapid: settings.webPush, message: webPushMessage(content, settings.privateMode) });
        const status = r.status;
        if (status === undefined) return { result: 'retry', ...(r.reason ? { reason: r.reason } : {}), durationMs: r.durationMs };
        const result = status >= 200 && status < 300 ? 'sent' : status === 404 || status === 410 ? 'gone' : transient(status) ? 'retry' : 'failed';
        return { result, status, ...(r.reason ? { reason: r.reason } : {}), durationMs: r.durationMs };
      }
      if (a.kind === 'apns') {
        if (!settings.apns) return { result: 'unconfigured', durationMs: 0 };
        const r = await this.apns.send(settings.apns, a.token, apnsNotification(content, settings.privateMode));
        const gone = r.status === 410 || r.reason === 'Unregistered' || r.reason === 'BadDeviceToken' || r.reason === 'DeviceTokenNotForTopic';
        // An expired provider token is made again on the next attempt.
        const result = r.status === 200 ? 'sent' : gone ? 'gone' : transient(r.status) || r.reason === 'ExpiredProviderToken' ? 'retry' : 'failed';
        return { result, status: r.status, ...(r.reason ? { reason: r.reason } : {}), durationMs: took() };
      }
      if (!settings.fcm) return { result: 'unconfigured', durationMs: 0 };
      const r = await this.fcm.send(settings.fcm, a.token, fcmNotification(content, settings.privateMode));
      const gone = r.status === 404 || r.errorCode === 'UNREGISTERED';
      // 401: the access token was dropped and is got again on the next attempt.
      const result = r.status === 200 ? 'sent' : gone ? 'gone' : transient(r.status) || r.status === 401 ? 'retry' : 'failed';
      return { result, status: r.status, ...(r.errorCode ? { reason: r.errorCode } : {}), durationMs: took() };
    } catch (error) {
      return { result: 'retry', reason: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 200) : String(error), durationMs: took() };
    }
  }

  async close(): Promise<void> {
    this.apns.close();
    await Promise.all([this.web.close(), this.fcm.close()]);
  }
}
