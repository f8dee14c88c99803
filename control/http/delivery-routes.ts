import { randomUUID } from 'node:crypto';
import { ApiError } from '../../common/index.ts';
import { defineRoute, type AnyRoute } from '../../common/http/index.ts';
import type { DeliveryResult } from '../../common/webhooks/index.ts';
import type { ControlContext } from '../context.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../store/index.ts';
import { DeliveriesQuery, DeliveryParams, WebhookDeliveryList, WebhookDelivery as DeliverySchema, WebhookParams } from './schemas.ts';

/** Attempts listed when the query names no limit (at most 100: the log keeps no more to show). */
const DEFAULT_LIMIT = 50;

/** An attempt as the API shows it: never the body, which may carry the application's data. */
export const deliveryView = (d: WebhookDelivery) => ({
  id: d.id,
  eventId: d.eventId,
  type: d.type,
  attempt: d.attempt,
  status: d.status,
  ...(d.statusCode !== undefined ? { statusCode: d.statusCode } : {}),
  durationMs: d.durationMs,
  ...(d.error ? { error: d.error } : {}),
  ...(d.nextRetryAt ? { nextRetryAt: d.nextRetryAt } : {}),
  at: d.at,
});

/** The record of one attempt made from the control service (a test or a retry: none is scheduled after it). */
export function attemptMade(endpoint: WebhookEndpoint, sent: { eventId: string; type: string; attempt: number; body: string }, result: DeliveryResult, at: Date): WebhookDelivery {
  return {
    id: randomUUID(),
    appId: endpoint.appId,
    endpointId: endpoint.id,
    eventId: sent.eventId,
    type: sent.type,
    attempt: sent.attempt,
    status: result.ok ? 'succeeded' : 'failed',
    ...(result.statusCode !== undefined ? { statusCode: result.statusCode } : {}),
    durationMs: result.durationMs,
    ...(result.error ? { error: result.error } : {}),
    at: at.toISOString(),
    body: sent.body,
  };
}

/** What the delivery log's routes share with the endpoint routes (webhook-routes.ts). */
export interface DeliveryRouteDeps {
  /** The endpoint of an application of the account, or the error that says which is missing. */
  find: (accountId: string, appId: string, webhookId: string) => Promise<WebhookEndpoint | ApiError>;
  /** Counts a send the account asked for (tests and retries share one budget): the refusal, if over it. */
  throttle: (accountId: string) => ApiError | undefined;
  /** One signed POST of `body` to the endpoint as it is now (its URL and secret), as event `eventId`. */
  send: (endpoint: WebhookEndpoint, eventId: string, body: string) => Promise<DeliveryResult>;
  /** The statuses every endpoint route answers (400, 401, 404 of the endpoint). */
  responses: AnyRoute['responses'];
  sendsPerMinute: number;
}

/** An endpoint's delivery log (README, "Webhooks", "Delivery log"): listing recent attempts, and retrying one now. */
export function deliveryRoutes(ctx: ControlContext, deps: DeliveryRouteDeps): AnyRoute[] {
  const auth = { verify: ctx.tokens.authenticate, security: 'accessToken' };
  const tags = ['webhooks'];
  const notFound = () => new ApiError('WEBHOOK_DELIVERY_NOT_FOUND', 'no such attempt in this endpoint’s delivery log');

  return [
    defineRoute({
      method: 'GET',
      path: '/api/client/apps/:appId/webhooks/:webhookId/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'The endpoint’s most recent delivery attempts, newest first (never their bodies)',
      description: 'Every attempt to deliver an event (tests and retries included) with how the receiver answered. The log keeps each endpoint’s last 100 attempts (on Cassandra, those of the last 24 hours); deleting the endpoint deletes it.',
      tags,
      params: WebhookParams,
      query: DeliveriesQuery,
      auth,
      responses: { 200: { description: 'Attempts, newest first', schema: WebhookDeliveryList }, ...deps.responses },
      handler: async ({ params, query, auth }) => {
        const found = await deps.find(auth.accountId, params.appId, params.webhookId);
        if (found instanceof ApiError) return found;
        const list = await ctx.store.webhooks.deliveries(found.appId, found.id, query.limit ?? DEFAULT_LIMIT);
        return { status: 200, body: { deliveries: list.map(deliveryView) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/client/apps/:appId/webhooks/:webhookId/deliveries/:deliveryId/retry',
      operationId: 'retryWebhookDelivery',
      summary: 'Send a logged attempt’s event again now, and report how the endpoint answered',
      description: `The same body and \`webhook-id\` (the event id), signed with the endpoint’s current secret and sent to its current URL, whatever its status. The new attempt is logged (its \`attempt\` one more than the retried one’s). Tests and retries together: at most ${deps.sendsPerMinute} per account per minute.`,
      tags,
      params: DeliveryParams,
      auth,
      responses: {
        200: { description: 'The new attempt: delivered, or why not', schema: DeliverySchema },
        ...deps.responses,
        404: { description: 'No such application in this account, endpoint, or attempt in its log (APP_NOT_FOUND, WEBHOOK_NOT_FOUND, WEBHOOK_DELIVERY_NOT_FOUND)' },
        429: { description: 'Too many tests and retries (RATE_LIMITED)' },
      },
      handler: async ({ params, auth }) => {
        const found = await deps.find(auth.accountId, params.appId, params.webhookId);
        if (found instanceof ApiError) return found;
        const earlier = await ctx.store.webhooks.delivery(found.appId, found.id, params.deliveryId);
        if (!earlier) return notFound();
        const refused = deps.throttle(auth.accountId);
        if (refused) return refused;
        const result = await deps.send(found, earlier.eventId, earlier.body);
        const made = attemptMade(found, { eventId: earlier.eventId, type: earlier.type, attempt: earlier.attempt + 1, body: earlier.body }, result, ctx.now());
        await ctx.store.webhooks.recordDeliveries([made]);
        ctx.log.info({ appId: found.appId, webhookId: found.id, eventId: made.eventId, status: made.status }, 'webhook delivery retried');
        return { status: 200, body: deliveryView(made) };
      },
    }),
  ];
}
