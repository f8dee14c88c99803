/**
 * The records webhooks are made of, shared by the control service (which keeps them) and the
 * nodes (which deliver with them and log each attempt).
 */

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

/** One attempt to deliver an event to an endpoint (README, "Webhooks"). */
export interface WebhookDelivery {
  /** The attempt's id (a UUID). */
  id: string;
  appId: string;
  endpointId: string;
  /** The event's id (`evt_…`), the `webhook-id` header of every attempt of it. */
  eventId: string;
  type: string;
  /** 1 for the first attempt of the event at this endpoint. */
  attempt: number;
  status: 'succeeded' | 'failed';
  statusCode?: number;
  durationMs: number;
  error?: string;
  /** When the next attempt is due, if one is scheduled. */
  nextRetryAt?: string;
  /** When the attempt was made. */
  at: string;
  /** The body that was sent (a retry sends it again). */
  body: string;
}
