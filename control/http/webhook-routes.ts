import { randomUUID } from 'node:crypto';
import { ApiError, WindowLimiter } from '../../common/index.ts';
import { defineRoute, type AnyRoute } from '../../common/http/index.ts';
import { deliver, DELIVERY_TIMEOUT_MS, EventIds, newWebhookSecret, TEST_EVENT, webhookUrlProblem, type WebhookEnvelope } from '../../common/webhooks/index.ts';
import { LIMITS, type ControlContext } from '../context.ts';
import type { WebhookEndpoint } from '../store/index.ts';
import { attemptMade, deliveryRoutes } from './delivery-routes.ts';
import { AppParams, CreateWebhookBody, UpdateWebhookBody, Webhook, WebhookCreated, WebhookList, WebhookParams, WebhookSecret, WebhookTestResult } from './schemas.ts';

const appNotFound = () => new ApiError('APP_NOT_FOUND', 'no such application in this account');
const notFound = () => new ApiError('WEBHOOK_NOT_FOUND', 'no such webhook endpoint in this application');
/** Tests and retries per account per minute: the service POSTs where the integrator says, so it is bounded. */
const TESTS_PER_MINUTE = 10;

/** The endpoint as the API shows it: never the secret (that has calls of its own). */
const view = (e: WebhookEndpoint) => ({
  id: e.id,
  url: e.url,
  events: e.events,
  ...(e.description ? { description: e.description } : {}),
  status: e.status,
  ...(e.disabledReason ? { disabledReason: e.disabledReason } : {}),
  createdAt: e.createdAt,
  updatedAt: e.updatedAt,
});

export function webhookRoutes(ctx: ControlContext): AnyRoute[] {
  const auth = { verify: ctx.tokens.authenticate, security: 'accessToken' };
  const insecure = ctx.config.WEBHOOK_ALLOW_INSECURE_URLS;
  const tests = new WindowLimiter(TESTS_PER_MINUTE, 60_000);
  const eventIds = new EventIds();
  const throttle = (accountId: string) => {
    const d = tests.hit(accountId);
    return d.allowed ? undefined : new ApiError('RATE_LIMITED', `at most ${TESTS_PER_MINUTE} webhook tests and retries per minute`, { retryAfterSeconds: d.retryAfterSeconds });
  };
  const send = (endpoint: WebhookEndpoint, eventId: string, body: string) =>
    deliver({ url: endpoint.url, secret: endpoint.secret, id: eventId, body, timeoutMs: DELIVERY_TIMEOUT_MS, allowInsecure: insecure, now: ctx.now });
  const badUrl = (url: string) => {
    const problem = webhookUrlProblem(url, insecure);
    return problem && new ApiError('VALIDATION_FAILED', `url ${problem}`, { errors: [{ path: '/body/url', message: problem }] });
  };
  /** The endpoint of an application of the account, or the error that says which is missing. */
  const find = async (accountId: string, appId: string, webhookId: string) => {
    if (!(await ctx.store.applications.get(accountId, appId))) return appNotFound();
    return (await ctx.store.webhooks.get(appId, webhookId)) ?? notFound();
  };
  const common = { 400: { description: 'Invalid fields or ids (VALIDATION_FAILED, naming the field)' }, 401: { description: 'Token missing or invalid' }, 404: { description: 'No such application in this account, or no such endpoint (APP_NOT_FOUND, WEBHOOK_NOT_FOUND)' } };
  const tags = ['webhooks'];

  return [
    defineRoute({
      method: 'POST',
      path: '/api/client/apps/:appId/webhooks',
      operationId: 'createWebhook',
      summary: 'Add a webhook endpoint: events of the application are POSTed to it, signed (Standard Webhooks)',
      tags,
      params: AppParams,
      body: CreateWebhookBody,
      auth,
      responses: { 201: { description: 'Created; `secret` verifies its deliveries', schema: WebhookCreated }, ...common, 403: { description: `The application has ${LIMITS.webhooksPerApplication} endpoints (WEBHOOK_LIMIT_REACHED)` } },
      handler: async ({ params, body, auth }) => {
        const refused = badUrl(body.url);
        if (refused) return refused;
        if (!(await ctx.store.applications.get(auth.accountId, params.appId))) return appNotFound();
        const now = ctx.now().toISOString();
        const endpoint: WebhookEndpoint = {
          id: randomUUID(),
          appId: params.appId,
          url: body.url,
          events: body.events,
          ...(body.description ? { description: body.description } : {}),
          status: 'ACTIVE',
          secret: newWebhookSecret(),
          createdAt: now,
          updatedAt: now,
        };
        if ((await ctx.store.webhooks.create(endpoint, LIMITS.webhooksPerApplication)) === 'limit') {
          return new ApiError('WEBHOOK_LIMIT_REACHED', `an application may have at most ${LIMITS.webhooksPerApplication} webhook endpoints; delete one first`);
        }
        ctx.log.info({ appId: endpoint.appId, webhookId: endpoint.id }, 'webhook endpoint created');
        ctx.onWebhooksChanged(endpoint.appId);
        return { status: 201, body: { ...view(endpoint), secret: endpoint.secret } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/client/apps/:appId/webhooks',
      operationId: 'listWebhooks',
      summary: 'List the application’s webhook endpoints, oldest first (never the secret)',
      tags,
      params: AppParams,
      auth,
      responses: { 200: { description: 'Endpoints', schema: WebhookList }, ...common },
      handler: async ({ params, auth }) => {
        if (!(await ctx.store.applications.get(auth.accountId, params.appId))) return appNotFound();
        return { status: 200, body: { webhooks: (await ctx.store.webhooks.list(params.appId)).map(view) } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/client/apps/:appId/webhooks/:webhookId',
      operationId: 'getWebhook',
      summary: 'Get a webhook endpoint (never the secret)',
      tags,
      params: WebhookParams,
      auth,
      responses: { 200: { description: 'The endpoint', schema: Webhook }, ...common },
      handler: async ({ params, auth }) => {
        const found = await find(auth.accountId, params.appId, params.webhookId);
        return found instanceof ApiError ? found : { status: 200, body: view(found) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/client/apps/:appId/webhooks/:webhookId',
      operationId: 'updateWebhook',
      summary: 'Change an endpoint’s URL, events or description, or turn it off (DISABLED) and on (ACTIVE)',
      tags,
      params: WebhookParams,
      body: UpdateWebhookBody,
      auth,
      responses: { 200: { description: 'Updated', schema: Webhook }, ...common },
      handler: async ({ params, body, auth }) => {
        const refused = body.url !== undefined && badUrl(body.url);
        if (refused) return refused;
        const found = await find(auth.accountId, params.appId, params.webhookId);
        if (found instanceof ApiError) return found;
        const { disabledReason: _, ...rest } = found;
        const status = body.status ?? found.status;
        const updated: WebhookEndpoint = {
          ...rest,
          ...(body.url !== undefined ? { url: body.url } : {}),
          ...(body.events !== undefined ? { events: body.events } : {}),
          ...(body.description !== undefined ? (body.description ? { description: body.description } : { description: undefined }) : {}),
          status,
          // Turned on again: the reason it was off goes; turned off here: the integrator did it.
          ...(status === 'DISABLED' ? { disabledReason: body.status === 'DISABLED' ? 'disabled by the integrator' : found.disabledReason ?? 'disabled' } : {}),
          updatedAt: ctx.now().toISOString(),
        };
        if (updated.description === undefined) delete updated.description;
        if ((await ctx.store.webhooks.update(updated)) === 'not-found') return notFound();
        ctx.onWebhooksChanged(updated.appId);
        return { status: 200, body: view(updated) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/client/apps/:appId/webhooks/:webhookId',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook endpoint: nothing more is sent to it',
      tags,
      params: WebhookParams,
      auth,
      responses: { 204: { description: 'Deleted' }, ...common },
      handler: async ({ params, auth }) => {
        const found = await find(auth.accountId, params.appId, params.webhookId);
        if (found instanceof ApiError) return found;
        if ((await ctx.store.webhooks.delete(params.appId, params.webhookId)) === 'not-found') return notFound();
        ctx.onWebhooksChanged(params.appId);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/client/apps/:appId/webhooks/:webhookId/secret',
      operationId: 'revealWebhookSecret',
      summary: 'Reveal an endpoint’s signing secret',
      tags,
      params: WebhookParams,
      auth,
      responses: { 200: { description: 'The secret', schema: WebhookSecret }, ...common },
      handler: async ({ params, auth }) => {
        const found = await find(auth.accountId, params.appId, params.webhookId);
        return found instanceof ApiError ? found : { status: 200, body: { secret: found.secret } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/client/apps/:appId/webhooks/:webhookId/secret/rotate',
      operationId: 'rotateWebhookSecret',
      summary: 'Replace an endpoint’s signing secret: deliveries from now on are signed with the new one',
      tags,
      params: WebhookParams,
      auth,
      responses: { 200: { description: 'The new secret', schema: WebhookSecret }, ...common },
      handler: async ({ params, auth }) => {
        const found = await find(auth.accountId, params.appId, params.webhookId);
        if (found instanceof ApiError) return found;
        const updated = { ...found, secret: newWebhookSecret(), updatedAt: ctx.now().toISOString() };
        if ((await ctx.store.webhooks.update(updated)) === 'not-found') return notFound();
        ctx.log.info({ appId: found.appId, webhookId: found.id }, 'webhook secret rotated');
        ctx.onWebhooksChanged(found.appId);
        return { status: 200, body: { secret: updated.secret } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/client/apps/:appId/webhooks/:webhookId/test',
      operationId: 'testWebhook',
      summary: `Send a signed \`${TEST_EVENT}\` event to the endpoint now and report how it answered`,
      description: `Whatever events the endpoint subscribes to, and even while it is disabled. The attempt is logged (see listWebhookDeliveries). Tests and retries together: at most ${TESTS_PER_MINUTE} per account per minute.`,
      tags,
      params: WebhookParams,
      auth,
      responses: { 200: { description: 'The attempt: delivered, or why not', schema: WebhookTestResult }, ...common, 429: { description: 'Too many tests and retries (RATE_LIMITED)' } },
      handler: async ({ params, auth }) => {
        const found = await find(auth.accountId, params.appId, params.webhookId);
        if (found instanceof ApiError) return found;
        const refused = throttle(auth.accountId);
        if (refused) return refused;
        const now = ctx.now();
        const event: WebhookEnvelope = { type: TEST_EVENT, id: eventIds.next(now.getTime()), timestamp: now.toISOString(), appId: found.appId, data: { webhookId: found.id } };
        const body = JSON.stringify(event);
        const result = await send(found, event.id, body);
        await ctx.store.webhooks.recordDeliveries([attemptMade(found, { eventId: event.id, type: TEST_EVENT, attempt: 1, body }, result, now)]);
        return { status: 200, body: { delivered: result.ok, eventId: event.id, durationMs: result.durationMs, ...(result.statusCode !== undefined ? { statusCode: result.statusCode } : {}), ...(result.error ? { error: result.error } : {}) } };
      },
    }),
    ...deliveryRoutes(ctx, { find, throttle, send, responses: common, sendsPerMinute: TESTS_PER_MINUTE }),
  ];
}
