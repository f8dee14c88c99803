import { createPrivateKey } from 'node:crypto';
import { createSigner } from 'fast-jwt';
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
/** A JWT is used for this long, then made again (so one never goes out with less than 11 hours left). */
const VAPID_REUSE_MS = 3600_000;
const MAX_CACHED = 10_000;

/** ES256 signers by VAPID key, and JWTs by key and push service origin: signing is done once an hour per pair, not per push. */
const signers = new Map<string, (claims: Record<string, unknown>) => string>();
const jwts = new Map<string, { header: string; until: number }>();

function signerOf(vapid: VapidKeys): (claims: Record<string, unknown>) => string {
  let sign = signers.get(vapid.publicKey);
  if (!sign) {
    const point = Buffer.from(vapid.publicKey, 'base64url');
    const jwk = { kty: 'EC', crv: 'P-256', d: vapid.privateKey, x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33, 65).toString('base64url') };
    const pem = createPrivateKey({ key: jwk, format: 'jwk' }).export({ format: 'pem', type: 'pkcs8' }).toString();
    sign = createSigner({ key: pem, algorithm: 'ES256', noTimestamp: true, header: { alg: 'ES256', typ: 'JWT' } }) as (claims: Record<string, unknown>) => string;
    if (signers.size >= MAX_CACHED) signers.clear();
    signers.set(vapid.publicKey, sign);
  }
  return sign;
}

/**
 * The `Authorization` header of RFC 8292 for a push service's origin: `vapid t=<JWT>, k=<public
 * key>`, the JWT ES256-signed with the application's key, `aud` the origin, `exp` 12 hours ahead,
 * `sub` its contact. Made once an hour per key and origin (signing each push cost most of its CPU).
 */
export function vapidAuthorization(audience: string, vapid: VapidKeys, nowMs = Date.now()): string {
  const key = `${vapid.publicKey} ${vapid.subject} ${audience}`;
  const known = jwts.get(key);
  if (known && known.until > nowMs) return known.header;
  const jwt = signerOf(vapid)({ aud: audience, exp: Math.floor(nowMs / 1000) + VAPID_SECONDS, sub: vapid.subject });
  const header = `vapid t=${jwt}, k=${vapid.publicKey}`;
  if (jwts.size >= MAX_CACHED) jwts.clear();
  jwts.set(key, { header, until: nowMs + VAPID_REUSE_MS });
  return header;
}

/**
 * The request that delivers `message` to a Web Push subscription: its payload encrypted with the
 * subscription's keys (RFC 8291, `aes128gcm`: a new ECDH key pair and salt for each message, by
 * the `web-push` library), and the application's VAPID authorization (vapidAuthorization).
 */
export function webPushRequest(address: Extract<PushAddress, { kind: 'webPush' }>, vapid: VapidKeys, message: WebPushMessage, nowMs = Date.now()): WebPushRequest {
  const { cipherText } = webpush.encrypt(address.p256dh, address.auth, message.payload, 'aes128gcm');
  const headers: Record<string, string> = {
    'content-type': 'application/octet-stream',
    'content-encoding': 'aes128gcm',
    ttl: String(message.ttlSeconds),
    urgency: message.urgency,
    authorization: vapidAuthorization(new URL(address.endpoint).origin, vapid, nowMs),
  };
  if (message.topic) headers.topic = message.topic;
  return { url: address.endpoint, headers, body: Buffer.from(cipherText) };
}

/** A chat's collapse topic: its id without dashes (32 hex characters, valid base64url). */
export const chatTopic = (chatId: string): string => chatId.replaceAll('-', '').slice(0, 32);
