/** Webhooks on the node: events made with the writes they report, the outbox dispatcher, `message.unread`. */
export { NodeWebhooks, type NodeWebhooksOptions } from './hooks.ts';
export { BeforeSendHooks, type BeforeSendOptions, type BeforeSendSource } from './before-send.ts';
export type { DeliveryRecord, HookEndpoint, WebhookSource } from './source.ts';
