import Type, { type Static } from 'typebox';

/**
 * One push attempt as the delivery log keeps it (README, "Push notifications"): written by the
 * node that made it, read by the management API and the dashboard. Ids and the outcome only,
 * never the message.
 */
export const PushDeliveryRecord = Type.Object({
  id: Type.String({ format: 'uuid', description: 'The attempt' }),
  appId: Type.String(),
  provider: Type.Union([Type.Literal('webPush'), Type.Literal('apns'), Type.Literal('fcm')]),
  /** The push's outbox event (`evt_…`): every attempt of one push to one device shares it. */
  eventId: Type.String({ description: 'The push: every attempt of one push to one device carries it' }),
  messageId: Type.String({ description: 'The message pushed' }),
  userId: Type.String({ description: 'The recipient' }),
  deviceId: Type.String({ description: 'The device (see GET /api/push/devices)' }),
  attempt: Type.Integer({ minimum: 1 }),
  result: Type.Union([Type.Literal('sent'), Type.Literal('gone'), Type.Literal('retry'), Type.Literal('failed')], {
    description: 'sent: the push service took it; gone: it says the device is no longer there (the device was removed); retry: 429, 5xx or no answer (tried again at nextRetryAt); failed: refused for good',
  }),
  statusCode: Type.Optional(Type.Integer({ description: "The push service's HTTP status, when it answered" })),
  reason: Type.Optional(Type.String({ description: "The push service's reason (APNs `reason`, FCM error code, a Web Push body), or the network error" })),
  durationMs: Type.Integer({ minimum: 0 }),
  nextRetryAt: Type.Optional(Type.String({ format: 'date-time' })),
  at: Type.String({ format: 'date-time', description: 'When the attempt was made' }),
});
export type PushDeliveryRecord = Static<typeof PushDeliveryRecord>;

/** Attempts kept per application: the newest; older ones are dropped as new ones come. */
export const PUSH_DELIVERIES_KEPT = 1_000;
