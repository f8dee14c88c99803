import webpush from 'web-push';
import type { PushAddress } from '../store/index.ts';

/** What a push says and how a push service treats it (RFC 8030 §5). */
export interface WebPushMessage {
  /** The payload, encrypted for the browser (RFC 8291, aes128gcm); at most about 3,990 bytes. */
  payload: string;
  /** How long the push service keeps it while the browser is away (`TTL`), in seconds. */
  ttlSeconds: number;
  urgency: 'very-low' | 'low' | 'normal' | 'high';
  /** Pushes with the same topic replace each other while undelivered (`Topic`): at most 32 base64url characters. */
  topic?: string;
}

export interface VapidKeys {
  subject: string;
  publicKey: string;
  privateKey: string;
}

export interface WebPushRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** How long a VAPID JWT is valid (RFC 8292 allows at most 24 hours). */
const VAPID_SECONDS = 12 * 3600;

/**
 * The request that delivers `message` to a Web Push subscription: its payload encrypted with the
 * subscription's keys (RFC 8291, `aes128gcm`), and the application's VAPID JWT (RFC 8292: ES256,
 * `aud` the push service's origin, `exp` VAPID_SECONDS ahead, `sub` its contact) with its public
 * key in `Authorization: vapid t=…, k=…`. The `web-push` library does both, as the standards say.
 */
export function webPushRequest(address: Extract<PushAddress, { kind: 'webPush' }>, vapid: VapidKeys, message: WebPushMessage, nowMs = Date.now()): WebPushRequest {
  const details = webpush.generateRequestDetails({ endpoint: address.endpoint, keys: { p256dh: address.p256dh, auth: address.auth } }, message.payload, {
    vapidDetails: { subject: vapid.subject, publicKey: vapid.publicKey, privateKey: vapid.privateKey },
    TTL: message.ttlSeconds,
    urgency: message.urgency,
    contentEncoding: 'aes128gcm',
    ...(message.topic ? { topic: message.topic } : {}),
  });
  // The library's JWT expires 12 hours after its own clock: made again here from `nowMs` (the same claims, the same key).
  const audience = new URL(address.endpoint).origin;
  const { Authorization } = webpush.getVapidHeaders(audience, vapid.subject, vapid.publicKey, vapid.privateKey, 'aes128gcm', Math.floor(nowMs / 1000) + VAPID_SECONDS);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(details.headers)) headers[name.toLowerCase()] = String(value);
  headers.authorization = Authorization;
  return { url: details.endpoint, headers, body: Buffer.from(details.body ?? Buffer.alloc(0)) };
}

/** A chat's collapse topic: its id without dashes (32 hex characters, valid base64url). */
export const chatTopic = (chatId: string): string => chatId.replaceAll('-', '').slice(0, 32);
