import Type from 'typebox';
import { DisplayText, EmailAddress } from '../../common/index.ts';
import { PushDeliveryRecord } from '../../common/push/index.ts';
import { MAX_WEBHOOK_URL, WEBHOOK_EVENTS } from '../../common/webhooks/index.ts';

/** Validation rules of the management interface (spec §4.1 rule 4 leaves them to us; README lists them). */
export const Email = EmailAddress();
export const Password = Type.String({
  minLength: 8,
  maxLength: 128,
  pattern: '\\S',
  description: '8–128 characters, not only whitespace.',
});
export const CompanyName = DisplayText(1, 100);
export const AppName = DisplayText(1, 64);
const Uuid = Type.String({ format: 'uuid', description: 'UUID' });
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC' });

export const RegisterBody = Type.Object({ companyName: CompanyName, email: Email, password: Password }, { additionalProperties: false });
export const LoginBody = Type.Object({ email: Type.String({ maxLength: 254 }), password: Type.String({ maxLength: 128 }) }, { additionalProperties: false });
export const RefreshBody = Type.Object({ refreshToken: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const LogoutBody = Type.Object(
  { refreshToken: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Ends this refresh token’s session; without it, the session of the access token ends.' })) },
  { additionalProperties: false },
);

export const RegisterResponse = Type.Object({
  accessToken: Type.String(),
  email: Type.String(),
  role: Type.Literal('CLIENT'),
  expiresIn: Type.Literal(900),
  refreshToken: Type.String({ description: 'Opaque; rotates on every refresh.' }),
});
export const LoginResponse = Type.Union([
  Type.Object(
    { mfaRequired: Type.Literal(false), accessToken: Type.String(), email: Type.String(), role: Type.Literal('CLIENT'), refreshToken: Type.String() },
    { description: 'Signed in (the account has no second factor).' },
  ),
  Type.Object(
    {
      mfaRequired: Type.Literal(true),
      mfaToken: Type.String({ description: 'Single use, for POST /api/auth/mfa/verify only, within MFA_TOKEN_TTL_SECONDS (default 5 minutes); a bearer nowhere.' }),
      email: Type.String(),
      role: Type.Literal('CLIENT'),
    },
    { description: 'The password was right and the account has MFA on: no session until the code is verified.' },
  ),
]);

const MfaCode = Type.String({ minLength: 1, maxLength: 32, description: 'A 6-digit code of the authenticator app, or an unused recovery code (`xxxxx-xxxxx`).' });
export const MfaEnrolment = Type.Object({
  secret: Type.String({ description: 'Base32 TOTP secret (SHA-1, 6 digits, 30 s), for typing into an authenticator app.' }),
  otpauthUri: Type.String({ description: 'The same as an otpauth:// URI.' }),
  qrSvg: Type.String({ description: 'The URI as a QR code, an SVG document.' }),
});
export const MfaConfirmBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 32, description: 'A current 6-digit code of the new enrolment.' }) }, { additionalProperties: false });
export const MfaRecoveryCodes = Type.Object({
  recoveryCodes: Type.Array(Type.String(), { minItems: 10, maxItems: 10, description: 'Ten single-use codes, shown this once (stored hashed).' }),
});
export const MfaDisableBody = Type.Object({ currentPassword: Type.String({ maxLength: 128 }), code: MfaCode }, { additionalProperties: false });
export const MfaVerifyBody = Type.Object({ mfaToken: Type.String({ minLength: 1, maxLength: 2000 }), code: MfaCode }, { additionalProperties: false });
export const MfaSession = Type.Object({
  mfaRequired: Type.Literal(false),
  accessToken: Type.String(),
  refreshToken: Type.String(),
  expiresIn: Type.Literal(900),
  email: Type.String(),
  role: Type.Literal('CLIENT'),
});
export const MfaStatus = Type.Object({ enabled: Type.Boolean(), enabledAt: Type.Optional(Timestamp), recoveryCodesLeft: Type.Integer() });
export const RefreshResponse = Type.Object({ accessToken: Type.String(), refreshToken: Type.String(), expiresIn: Type.Literal(900) });

export const AppParams = Type.Object({ appId: Uuid });
export const KeyParams = Type.Object({ appId: Uuid, keyId: Uuid });
export const CreateAppBody = Type.Object({ name: AppName }, { additionalProperties: false });
export const UpdateAppBody = Type.Object({ name: AppName }, { additionalProperties: false });

const AppStatus = Type.Union([Type.Literal('ACTIVE'), Type.Literal('SUSPENDED')]);
const TierSchema = Type.Union([Type.Literal('DEMO'), Type.Literal('STANDARD')], { description: 'DEMO (the default: at most DEMO_MAX_CONCURRENT_USERS users connected at once) or STANDARD (no ceiling); set by the operator' });
const appFields = {
  id: Uuid,
  clientId: Uuid,
  name: Type.String(),
  status: AppStatus,
  tier: TierSchema,
  clusterId: Uuid,
  createdAt: Timestamp,
  updatedAt: Timestamp,
};
export const ApplicationCreated = Type.Object(appFields, { description: 'Create form: no type or cluster details.' });
export const ApplicationDetail = Type.Object({
  ...appFields,
  type: TierSchema,
  clusterEndpoint: Type.String({ description: 'Base URL for chat calls of this application.' }),
  clusterName: Type.String(),
  clusterStatus: Type.Union([Type.Literal('ACTIVE'), Type.Literal('DRAINING'), Type.Literal('OFFLINE')], {
    description: 'ACTIVE; DRAINING (the application keeps working, none is moved onto it); OFFLINE (not serving). Set by the operator',
  }),
});
export const ApplicationList = Type.Object({ applications: Type.Array(ApplicationDetail) });

export const ApiKeyCreated = Type.Object({
  id: Uuid,
  token: Type.String({ description: 'The API key. Shown only in this response.' }),
  keyPrefix: Type.String({ description: 'First 8 characters of the token.' }),
  keySuffix: Type.String({ description: 'Last 4 characters of the token: every token starts alike (the JWT header), so this is what tells keys apart.' }),
  audience: Type.String({ description: 'Name of the cluster the key is for.' }),
  tier: TierSchema,
  createdAt: Timestamp,
});
export const ApiKeySummary = Type.Object({
  id: Uuid,
  keyPrefix: Type.String({ description: 'First 8 characters of the token (alike for every key: the JWT header).' }),
  keySuffix: Type.Optional(Type.String({ description: 'Last 4 characters of the token, which tell keys apart; absent on keys created before it was kept.' })),
  audience: Type.String(),
  tier: TierSchema,
  status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('REVOKED')]),
  createdAt: Timestamp,
  revokedAt: Type.Optional(Timestamp),
  lastUsedAt: Type.Union([Timestamp, Type.Null()], { description: 'When a cluster node last accepted the key (to within USAGE_FLUSH_SECONDS); null if never.' }),
});
export const ApiKeyList = Type.Object({ keys: Type.Array(ApiKeySummary) });

const Count = Type.Integer({ minimum: 0 });
export const Usage = Type.Object(
  {
    appId: Uuid,
    registeredUsers: Type.Integer({ description: 'Users registered, minus those deleted.' }),
    chats: Type.Integer({ description: 'Chats created, minus those deleted.' }),
    messages: Type.Integer({ description: 'Messages sent, all time.' }),
    storedFileBytes: Type.Integer({ minimum: 0, description: 'Bytes of attachment files stored now (finalized files and their thumbnails, less those deleted).' }),
    concurrentUsers: Type.Object({
      current: Type.Integer({ minimum: 0, description: 'Distinct users connected over WebSocket now, cluster-wide (as last sampled).' }),
      peak: Type.Integer({ minimum: 0, description: 'The highest of `days[].peakUsers`.' }),
    }),
    days: Type.Array(Type.Object({ day: Type.String({ description: 'UTC day, YYYY-MM-DD' }), messages: Count, peakUsers: Count }), {
      minItems: 30,
      maxItems: 30,
      description: 'The last 30 UTC days, oldest first; the last is today.',
    }),
    asOf: Timestamp,
  },
  { description: 'Counted by the nodes and added to the store every USAGE_FLUSH_SECONDS (default 60): figures lag by at most that.' },
);

export const WebhookParams = Type.Object({ appId: Uuid, webhookId: Uuid });
const WebhookEvents = Type.Array(Type.Union(WEBHOOK_EVENTS.map((e) => Type.Literal(e))), {
  minItems: 1,
  maxItems: WEBHOOK_EVENTS.length,
  uniqueItems: true,
  description: 'The event types the endpoint receives (README, "Webhooks").',
});
const WebhookUrl = Type.String({ minLength: 1, maxLength: MAX_WEBHOOK_URL, description: 'https:// URL whose host resolves to public addresses (WEBHOOK_ALLOW_INSECURE_URLS relaxes both).' });
const WebhookDescription = DisplayText(1, 200);
export const CreateWebhookBody = Type.Object({ url: WebhookUrl, events: WebhookEvents, description: Type.Optional(WebhookDescription) }, { additionalProperties: false });
export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    events: Type.Optional(WebhookEvents),
    description: Type.Optional(Type.Union([WebhookDescription, Type.Literal('', { description: 'Removes the description.' })])),
    status: Type.Optional(Type.Union([Type.Literal('ACTIVE'), Type.Literal('DISABLED')], { description: 'DISABLED stops deliveries; ACTIVE turns a disabled endpoint on again.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export const Webhook = Type.Object({
  id: Uuid,
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.Optional(Type.String()),
  status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('DISABLED')]),
  disabledReason: Type.Optional(Type.String({ description: 'Why it is disabled: by the integrator, 410 from the receiver, or failing for 24 h.' })),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const WebhookCreated = Type.Object({ ...Webhook.properties, secret: Type.String({ description: 'The signing secret (whsec_…): shown here, by the reveal call and on rotation.' }) });
export const WebhookList = Type.Object({ webhooks: Type.Array(Webhook) });
export const WebhookSecret = Type.Object({ secret: Type.String({ description: 'whsec_ and 32 random bytes in base64 (Standard Webhooks).' }) });
export const DeliveryParams = Type.Object({ appId: Uuid, webhookId: Uuid, deliveryId: Uuid });
export const DeliveriesQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'default 50, at most 100' })),
});
export const WebhookDelivery = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The attempt (retry it by this id).' }),
  eventId: Type.String({ description: 'The event: the `webhook-id` header of every attempt of it.' }),
  type: Type.String({ description: 'The event type (`webhook.test` for a test).' }),
  attempt: Type.Integer({ minimum: 1, description: '1 for the first attempt of the event at this endpoint.' }),
  status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed')], { description: 'succeeded: the receiver answered 2xx within 10 s.' }),
  statusCode: Type.Optional(Type.Integer({ description: 'The HTTP status, when the receiver answered.' })),
  durationMs: Type.Integer({ minimum: 0 }),
  error: Type.Optional(Type.String({ description: 'Why it failed, in words.' })),
  nextRetryAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the next attempt is due, if one is scheduled.' })),
  at: Type.String({ format: 'date-time', description: 'When the attempt was made.' }),
});
export const WebhookDeliveryList = Type.Object({ deliveries: Type.Array(WebhookDelivery, { description: 'Newest first.' }) });
export const PushDeliveriesQuery = Type.Object({
  provider: Type.Optional(Type.Union(PushDeliveryRecord.properties.provider.anyOf, { description: 'Only the attempts through this provider' })),
  limit: DeliveriesQuery.properties.limit,
});
/** An attempt as the push delivery log lists it: the record without `appId`, which the path names. */
export const PushDelivery = Type.Omit(PushDeliveryRecord, ['appId']);
export const PushDeliveryList = Type.Object({ deliveries: Type.Array(PushDelivery, { description: 'Newest first.' }) });
export const WebhookTestResult = Type.Object({
  delivered: Type.Boolean({ description: 'The receiver answered 2xx within 10 s.' }),
  eventId: Type.String({ description: 'The `webhook-id` the test delivery carried.' }),
  statusCode: Type.Optional(Type.Integer()),
  durationMs: Type.Integer({ minimum: 0 }),
  error: Type.Optional(Type.String()),
});

export const Profile = Type.Object({
  id: Uuid,
  companyName: Type.String(),
  email: Type.String(),
  role: Type.Literal('CLIENT'),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export const UpdateProfileBody = Type.Object(
  {
    companyName: Type.Optional(CompanyName),
    email: Type.Optional(Email),
    password: Type.Optional(Password),
    currentPassword: Type.Optional(Type.String({ maxLength: 128, description: 'Required to change email or password.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
