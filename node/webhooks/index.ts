/** Webhooks on the node: events made with the writes they report, the outbox dispatcher, `message.unread`. */
export { changeWithEvents, NodeWebhooks, type ChangeEventItem, type ChatWebhooks, type NodeWebhooksOptions } from './hooks.ts';
export type { DeliveryRecord, HookEndpoint, WebhookSource } from './source.ts';
