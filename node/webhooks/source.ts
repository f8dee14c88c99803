import type { WebhookDelivery, WebhookEndpoint } from '../../common/webhooks/index.ts';

/** An endpoint as the node delivers to it. */
export type HookEndpoint = WebhookEndpoint;
/** One delivery attempt, as the control service lists it. */
export type DeliveryRecord = WebhookDelivery;

/**
 * What the node needs of the control store for webhooks (its WebhookStore is one): the endpoints of
 * an application, a way to disable one, and the delivery log.
 */
export interface WebhookSource {
  list(appId: string): Promise<HookEndpoint[]>;
  get(appId: string, id: string): Promise<HookEndpoint | undefined>;
  update(endpoint: HookEndpoint): Promise<'updated' | 'not-found'>;
  recordDeliveries(records: DeliveryRecord[]): Promise<void>;
}
