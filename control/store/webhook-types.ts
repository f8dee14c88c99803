/** A webhook endpoint of an application (README, "Webhooks"). */
export interface WebhookEndpoint {
  id: string;
  appId: string;
  url: string;
  /** The event types it receives (see WEBHOOK_EVENTS). */
  events: string[];
  description?: string;
  status: 'ACTIVE' | 'DISABLED';
  /** Why it is disabled (410 from the receiver, failing for 24 h, or the integrator). */
  disabledReason?: string;
  /** The signing secret, `whsec_…`: kept readable, as signing needs it (the store's files are 0600). */
  secret: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The endpoints of each application, at most `limit` each (checked atomically with the create, so
 * concurrent creates never pass it).
 */
export interface WebhookStore {
  create(endpoint: WebhookEndpoint, limit: number): Promise<'created' | 'limit'>;
  list(appId: string): Promise<WebhookEndpoint[]>;
  get(appId: string, id: string): Promise<WebhookEndpoint | undefined>;
  /** Replaces an existing endpoint's record. */
  update(endpoint: WebhookEndpoint): Promise<'updated' | 'not-found'>;
  delete(appId: string, id: string): Promise<'deleted' | 'not-found'>;
}
