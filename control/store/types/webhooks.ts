import type { WebhookDelivery, WebhookEndpoint } from '../../../common/webhooks/index.ts';

export type { WebhookDelivery, WebhookEndpoint };

/**
 * The endpoints of each application, at most `limit` each (checked atomically with the create, so
 * concurrent creates never pass it), and each endpoint's delivery log.
 *
 * The log is a record of recent attempts, not a ledger: the embedded store keeps each endpoint's
 * last 100 whatever their age; Cassandra keeps every attempt for 24 hours (TTL), so an endpoint
 * that was quiet for a day shows fewer. Attempts recorded for an endpoint that does not exist (a
 * dispatcher racing its deletion) are never listed. Deleting an endpoint forgets its log.
 */
export interface WebhookStore {
  create(endpoint: WebhookEndpoint, limit: number): Promise<'created' | 'limit'>;
  list(appId: string): Promise<WebhookEndpoint[]>;
  get(appId: string, id: string): Promise<WebhookEndpoint | undefined>;
  /** Replaces an existing endpoint's record. */
  update(endpoint: WebhookEndpoint): Promise<'updated' | 'not-found'>;
  delete(appId: string, id: string): Promise<'deleted' | 'not-found'>;
  /** Records attempts (several endpoints at once). Each endpoint keeps its most recent attempts only (at least the last 100). */
  recordDeliveries(records: WebhookDelivery[]): Promise<void>;
  /** An endpoint's most recent attempts, newest first (by `at`, then id), at most `limit`. */
  deliveries(appId: string, endpointId: string, limit: number): Promise<WebhookDelivery[]>;
  delivery(appId: string, endpointId: string, id: string): Promise<WebhookDelivery | undefined>;
}
