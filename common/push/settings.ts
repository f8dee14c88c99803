import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import Type, { type Static } from 'typebox';
import type { FieldProblem } from '../errors/index.ts';

/**
 * An application's push providers as both services speak of them (README, "Push notifications"):
 * set on the control service (management API, dashboard), which keeps them with their secrets;
 * read by the nodes that deliver. A secret (the VAPID private key, the APNs .p8 key, the FCM
 * service account's private key) is taken once and never shown again.
 */

/** Largest PEM key accepted (a P-256 .p8 is about 250 characters, an RSA-2048 PKCS#8 about 1,700). */
const PEM_MAX = 8_192;
/** Largest service account JSON accepted (Google's are about 2,400 characters). */
const SERVICE_ACCOUNT_MAX = 16_384;

export const WebPushBody = Type.Object(
  {
    subject: Type.String({
      minLength: 8,
      maxLength: 256,
      pattern: '^(mailto:[^\\s@]+@[^\\s@]+|https://[^\\s]+)$',
      description: 'Who push services may contact about this sender (RFC 8292 `sub`): a `mailto:` address or an `https:` URL',
    }),
  },
  { additionalProperties: false },
);
export type WebPushBody = Static<typeof WebPushBody>;

export const ApnsBody = Type.Object(
  {
    keyId: Type.String({ pattern: '^[A-Z0-9]{10}$', description: 'The .p8 key’s id (10 characters, from the Apple developer account)' }),
    teamId: Type.String({ pattern: '^[A-Z0-9]{10}$', description: 'The team id (10 characters)' }),
    key: Type.String({ minLength: 1, maxLength: PEM_MAX, description: 'The .p8 key file’s text (PEM, an EC P-256 private key): never shown again' }),
    topic: Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9.-]+$', description: 'The app’s bundle id (`apns-topic`)' }),
    environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')], { description: 'Which APNs: `sandbox` for development builds, `production` for the App Store and TestFlight' }),
  },
  { additionalProperties: false },
);
export type ApnsBody = Static<typeof ApnsBody>;

export const FcmBody = Type.Object(
  {
    serviceAccount: Type.String({ minLength: 2, maxLength: SERVICE_ACCOUNT_MAX, description: 'The Firebase service account’s JSON key file, as text: its private key is never shown again' }),
  },
  { additionalProperties: false },
);
export type FcmBody = Static<typeof FcmBody>;

export const PushOptionsBody = Type.Object(
  {
    privateMode: Type.Boolean({ description: 'true: a push carries only ids (chat, message, sender); the app fetches the message itself. false: it carries the sender and the text' }),
  },
  { additionalProperties: false },
);
export type PushOptionsBody = Static<typeof PushOptionsBody>;

/** The providers as stored: each with its secret. */
export interface PushSettings {
  appId: string;
  privateMode: boolean;
  webPush?: { subject: string; publicKey: string; privateKey: string; createdAt: string };
  apns?: ApnsBody & { updatedAt: string };
  fcm?: { projectId: string; clientEmail: string; privateKey: string; privateKeyId?: string; tokenUri: string; updatedAt: string };
  updatedAt: string;
}

export const PushSettingsView = Type.Object({
  privateMode: Type.Boolean({ description: 'Pushes carry ids only (see PATCH)' }),
  webPush: Type.Optional(
    Type.Object({
      subject: Type.String(),
      publicKey: Type.String({ description: 'The VAPID public key (base64url, an uncompressed P-256 point): what a browser subscribes with (`applicationServerKey`)' }),
      createdAt: Type.String({ format: 'date-time' }),
    }),
  ),
  apns: Type.Optional(Type.Object({ keyId: Type.String(), teamId: Type.String(), topic: Type.String(), environment: Type.String(), updatedAt: Type.String({ format: 'date-time' }) })),
  fcm: Type.Optional(Type.Object({ projectId: Type.String(), clientEmail: Type.String(), updatedAt: Type.String({ format: 'date-time' }) })),
  updatedAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the settings last changed (absent: never set)' })),
});
export type PushSettingsView = Static<typeof PushSettingsView>;

/** What the management API shows of `s`: no secret. */
export function pushSettingsView(s: PushSettings | undefined): PushSettingsView {
  if (!s) return { privateMode: false };
  return {
    privateMode: s.privateMode,
    ...(s.webPush ? { webPush: { subject: s.webPush.subject, publicKey: s.webPush.publicKey, createdAt: s.webPush.createdAt } } : {}),
    ...(s.apns ? { apns: { keyId: s.apns.keyId, teamId: s.apns.teamId, topic: s.apns.topic, environment: s.apns.environment, updatedAt: s.apns.updatedAt } } : {}),
    ...(s.fcm ? { fcm: { projectId: s.fcm.projectId, clientEmail: s.fcm.clientEmail, updatedAt: s.fcm.updatedAt } } : {}),
    updatedAt: s.updatedAt,
  };
}

/** A new VAPID key pair (RFC 8292): the public key as an uncompressed P-256 point, the private key as its 32-byte scalar, both base64url. */
export function newVapidKeys(): { publicKey: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const jwk = privateKey.export({ format: 'jwk' });
  const pub = publicKey.export({ format: 'jwk' });
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(pub.x!, 'base64url'), Buffer.from(pub.y!, 'base64url')]);
  return { publicKey: point.toString('base64url'), privateKey: jwk.d! };
}

/** The key of a PEM text, or why it is not one of `type` (a parse of at most PEM_MAX characters). */
function pemKey(text: string, type: 'ec' | 'rsa'): KeyObject | string {
  if (!text.includes('-----BEGIN PRIVATE KEY-----')) return 'must be a PKCS#8 PEM private key (-----BEGIN PRIVATE KEY-----)';
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch {
    return 'is not a readable PEM private key';
  }
  if (key.asymmetricKeyType !== type) return `must be an ${type === 'ec' ? 'EC' : 'RSA'} key, not ${key.asymmetricKeyType ?? 'another kind'}`;
  if (type === 'ec' && key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return 'must be a P-256 key (an APNs .p8 key is)';
  if (type === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) return 'must be an RSA key of at least 2048 bits';
  return key;
}

/** Why `body.key` is not an APNs token key: one problem naming the field, or none. */
export function apnsProblems(body: ApnsBody): FieldProblem[] {
  const key = pemKey(body.key, 'ec');
  return typeof key === 'string' ? [{ path: '/body/key', message: key }] : [];
}

/**
 * The service account `text` names, or its problems (each naming the field): Google's JSON key
 * file, with `type` "service_account", a project id, a client e-mail, an RSA private key and (when
 * given) an https token URI. `insecureTokenUri`: a loopback http:// token URI is accepted too (tests).
 */
export function serviceAccountOf(text: string, insecureTokenUri = false): Omit<NonNullable<PushSettings['fcm']>, 'updatedAt'> | FieldProblem[] {
  const at = (field: string, message: string): FieldProblem[] => [{ path: `/body/serviceAccount${field}`, message }];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return at('', 'is not JSON (paste the whole key file)');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return at('', 'must be a JSON object (the key file)');
  const a = parsed as Record<string, unknown>;
  const text_ = (k: string) => (typeof a[k] === 'string' ? (a[k] as string) : undefined);
  if (text_('type') !== 'service_account') return at('/type', 'must be "service_account"');
  const projectId = text_('project_id');
  if (projectId === undefined || !/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/.test(projectId)) return at('/project_id', 'must be a Firebase project id (6–30 lower-case letters, digits and hyphens)');
  const clientEmail = text_('client_email');
  if (clientEmail === undefined || clientEmail.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(clientEmail)) return at('/client_email', 'must be the service account’s e-mail');
  const pem = text_('private_key');
  if (pem === undefined) return at('/private_key', 'is missing');
  if (pem.length > PEM_MAX) return at('/private_key', `must be at most ${PEM_MAX} characters`);
  const key = pemKey(pem, 'rsa');
  if (typeof key === 'string') return at('/private_key', key);
  const tokenUri = text_('token_uri') ?? 'https://oauth2.googleapis.com/token';
  if (!tokenUriAllowed(tokenUri, insecureTokenUri)) return at('/token_uri', insecureTokenUri ? 'must be an https:// or loopback http:// URL' : 'must be an https:// URL');
  const privateKeyId = text_('private_key_id');
  return { projectId, clientEmail, privateKey: pem, ...(privateKeyId !== undefined && privateKeyId.length <= 128 ? { privateKeyId } : {}), tokenUri };
}

function tokenUriAllowed(uri: string, insecure: boolean): boolean {
  if (uri.length > 2048) return false;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  return insecure && url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}
