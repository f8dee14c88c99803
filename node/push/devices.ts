import Type, { type Static } from 'typebox';
import type { FieldProblem } from '../../common/errors/index.ts';
import { webhookUrlProblem } from '../../common/webhooks/index.ts';
import type { PushAddress, PushDevice } from '../store/index.ts';

/** Push devices a user may register (README, "Push notifications"). */
export const PUSH_DEVICES_PER_USER = 10;

const WebPushSubscription = Type.Object(
  {
    endpoint: Type.String({ minLength: 12, maxLength: 2048, description: 'The push service URL the browser gave (`PushSubscription.endpoint`): https://' }),
    keys: Type.Object(
      {
        p256dh: Type.String({ minLength: 87, maxLength: 88, pattern: '^[A-Za-z0-9_-]+={0,1}$', description: 'The browser’s P-256 public key (base64url, 65 bytes)' }),
        auth: Type.String({ minLength: 22, maxLength: 24, pattern: '^[A-Za-z0-9_-]+={0,2}$', description: 'The browser’s authentication secret (base64url, 16 bytes)' }),
      },
      { additionalProperties: true },
    ),
    expirationTime: Type.Optional(Type.Union([Type.Null(), Type.Number()])),
  },
  { additionalProperties: false, description: 'A Web Push subscription, as `PushSubscription.toJSON()` gives it' },
);

export const RegisterPushBody = Type.Union(
  [
    Type.Object({ webPush: WebPushSubscription }, { additionalProperties: false }),
    Type.Object({ apns: Type.Object({ token: Type.String({ minLength: 64, maxLength: 200, pattern: '^[0-9a-fA-F]+$', description: 'The device token APNs gave the app, in hex' }) }, { additionalProperties: false }) }, { additionalProperties: false }),
    Type.Object({ fcm: Type.Object({ token: Type.String({ minLength: 1, maxLength: 4096, pattern: '^[A-Za-z0-9_:.-]+$', description: 'The registration token FCM gave the app' }) }, { additionalProperties: false }) }, { additionalProperties: false }),
  ],
  { description: 'One of: a Web Push subscription (`webPush`), an APNs token (`apns`), an FCM token (`fcm`)' },
);
export type RegisterPushBody = Static<typeof RegisterPushBody>;

export const PushDeviceView = Type.Object({
  deviceId: Type.String({ format: 'uuid' }),
  kind: Type.Union([Type.Literal('webPush'), Type.Literal('apns'), Type.Literal('fcm')]),
  endpoint: Type.Optional(Type.String({ description: 'A Web Push device’s push service URL' })),
  token: Type.Optional(Type.String({ description: 'An APNs or FCM device’s token' })),
  createdAt: Type.String({ format: 'date-time' }),
});
export type PushDeviceView = Static<typeof PushDeviceView>;

export const pushDeviceView = (d: PushDevice): PushDeviceView => ({
  deviceId: d.deviceId,
  kind: d.address.kind,
  ...(d.address.kind === 'webPush' ? { endpoint: d.address.endpoint } : { token: d.address.token }),
  createdAt: d.createdAt,
});

/**
 * The address a registration names, or its problems (each naming the field): a Web Push endpoint
 * is an https:// URL whose host is not a private address (`allowLoopback`: a loopback one is let
 * through, for tests), whose keys decode to a P-256 point and a 16-byte secret. Linear in the input.
 */
export function addressOf(body: RegisterPushBody, allowLoopback: boolean): PushAddress | FieldProblem[] {
  if ('apns' in body) return { kind: 'apns', token: body.apns.token.toLowerCase() };
  if ('fcm' in body) return { kind: 'fcm', token: body.fcm.token };
  const { endpoint, keys } = body.webPush;
  const urlProblem = webhookUrlProblem(endpoint, false) ?? (allowLoopback ? undefined : loopbackProblem(endpoint));
  if (urlProblem !== undefined && !(allowLoopback && loopbackHttps(endpoint))) return [{ path: '/body/webPush/endpoint', message: urlProblem }];
  const point = Buffer.from(keys.p256dh, 'base64url');
  if (point.length !== 65 || point[0] !== 4) return [{ path: '/body/webPush/keys/p256dh', message: 'must be an uncompressed P-256 public key (65 bytes, base64url)' }];
  if (Buffer.from(keys.auth, 'base64url').length !== 16) return [{ path: '/body/webPush/keys/auth', message: 'must be 16 bytes, base64url' }];
  return { kind: 'webPush', endpoint, p256dh: keys.p256dh.replace(/=+$/, ''), auth: keys.auth.replace(/=+$/, '') };
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);
const hostOf = (raw: string) => {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
};
const loopbackHttps = (raw: string) => {
  const url = hostOf(raw);
  return url !== undefined && url.protocol === 'https:' && LOOPBACK.has(url.hostname) && !url.username && !url.password && !url.hash;
};
/** A named loopback host passes webhookUrlProblem (names are checked where they resolve): refused here at once. */
const loopbackProblem = (raw: string) => (LOOPBACK.has(hostOf(raw)?.hostname ?? '') ? 'must be a public push service, not a loopback address' : undefined);
