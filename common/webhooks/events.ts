/**
 * The events a webhook endpoint subscribes to (README, "Webhooks"). Every delivery's body is
 * `{type, id, timestamp, appId, data}`; `id` is also the `webhook-id` header, by which receivers
 * deduplicate (delivery is at least once).
 */
export const WEBHOOK_EVENTS = [
  'message.new',
  'message.updated',
  'message.deleted',
  'reaction.added',
  'reaction.removed',
  'chat.created',
  'chat.updated',
  'chat.deleted',
  'member.added',
  'member.removed',
  'user.created',
  'user.deleted',
  'user.online',
  'user.offline',
  'message.unread',
  'user.banned',
  'user.unbanned',
  'member.muted',
  'member.unmuted',
  'member.banned',
  'member.unbanned',
  'message.flagged',
  'flag.resolved',
  'blocklist.updated',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** What `POST …/webhooks/{id}/test` sends: subscribed or not, an endpoint can always be tested. */
export const TEST_EVENT = 'webhook.test';

export interface WebhookEnvelope {
  type: WebhookEventType | typeof TEST_EVENT;
  id: string;
  timestamp: string;
  appId: string;
  data: unknown;
}
