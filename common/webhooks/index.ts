/** Webhooks: the event names and envelope, URL rules, Standard Webhooks signing, one delivery. */
export { TEST_EVENT, WEBHOOK_EVENTS, type WebhookEnvelope, type WebhookEventType } from './events.ts';
export { guardedLookup, isPublicAddress, MAX_WEBHOOK_URL, webhookUrlProblem } from './urls.ts';
export { newWebhookSecret, signatureHeaders } from './sign.ts';
export { deliver, DELIVERY_TIMEOUT_MS, type DeliveryRequest, type DeliveryResult } from './deliver.ts';
export { BEFORE_SEND_EVENT, BEFORE_SEND_LIMITS, BeforeSendAnswer, type BeforeSendPolicy } from './before-send.ts';
export { EventIds, eventTime, justAfter } from './ids.ts';
export { deliverPooled, deliveryPool } from './pooled.ts';
export { RETRY_SCHEDULE, retryDelay } from './retry.ts';
export type { WebhookDelivery, WebhookEndpoint } from './types.ts';
