import { ApiError } from '../../common/index.ts';
import { defineRoute, type AnyRoute } from '../../common/http/index.ts';
import { BEFORE_SEND_EVENT, BEFORE_SEND_LIMITS, newWebhookSecret, webhookUrlProblem } from '../../common/webhooks/index.ts';
import type { ControlContext } from '../context.ts';
import type { BeforeSendHook } from '../store/index.ts';
import { BeforeSendHookCreated, BeforeSendHookView, SetBeforeSendBody } from './before-send-schemas.ts';
import { AppParams, WebhookSecret } from './schemas.ts';

const appNotFound = () => new ApiError('APP_NOT_FOUND', 'no such application in this account');
const notFound = () => new ApiError('BEFORE_SEND_NOT_FOUND', 'this application has no before-send hook');

/** The hook as the API shows it: never the secret (that has calls of its own). */
const view = (h: BeforeSendHook) => ({ url: h.url, timeoutMs: h.timeoutMs, failurePolicy: h.failurePolicy, createdAt: h.createdAt, updatedAt: h.updatedAt });

/**
 * An application's before-send hook (README, "Before-send hook"): set, read, removed, and its
 * secret revealed and rotated. Every change is announced (`onWebhooksChanged`), so nodes drop the
 * copy they cached and the next send reads the new one.
 */
export function beforeSendRoutes(ctx: ControlContext): AnyRoute[] {
  const auth = { verify: ctx.tokens.authenticate, security: 'accessToken' };
  const insecure = ctx.config.WEBHOOK_ALLOW_INSECURE_URLS;
  /** The hook of an application of the account, or the error that says which is missing. */
  const find = async (accountId: string, appId: string) => {
    if (!(await ctx.store.applications.get(accountId, appId))) return appNotFound();
    return (await ctx.store.beforeSend.get(appId)) ?? notFound();
  };
  const common = {
    400: { description: 'Invalid fields or appId (VALIDATION_FAILED, naming the field)' },
    401: { description: 'Token missing or invalid' },
    404: { description: 'No such application in this account (APP_NOT_FOUND), or it has no before-send hook (BEFORE_SEND_NOT_FOUND)' },
  };
  const tags = ['before-send hook'];
  const path = '/api/client/apps/:appId/before-send';

  return [
    defineRoute({
      method: 'PUT',
      path,
      operationId: 'setBeforeSendHook',
      summary: 'Set the application’s before-send hook: every message is POSTed to it, signed, before it is stored',
      description:
        `The hook answers \`{"action":"allow"}\`, \`{"action":"reject","reason":"…"}\` (the sender gets MESSAGE_REJECTED) or ` +
        `\`{"action":"replace","content":"…"}\` to a signed \`${BEFORE_SEND_EVENT}\` call (README, "Before-send hook"). ` +
        'Replaces the whole setting: an omitted field takes its default. The secret is made when the hook is first set and kept by later changes.',
      tags,
      params: AppParams,
      body: SetBeforeSendBody,
      auth,
      responses: {
        200: { description: 'Changed (the secret is unchanged and not shown)', schema: BeforeSendHookView },
        201: { description: 'Set for the first time; `secret` verifies its calls', schema: BeforeSendHookCreated },
        ...common,
        404: { description: 'No such application in this account (APP_NOT_FOUND)' },
      },
      handler: async ({ params, body, auth }) => {
        const problem = webhookUrlProblem(body.url, insecure);
        if (problem) return new ApiError('VALIDATION_FAILED', `url ${problem}`, { errors: [{ path: '/body/url', message: problem }] });
        if (!(await ctx.store.applications.get(auth.accountId, params.appId))) return appNotFound();
        const now = ctx.now().toISOString();
        const setting = { url: body.url, timeoutMs: body.timeoutMs ?? BEFORE_SEND_LIMITS.defaultTimeoutMs, failurePolicy: body.failurePolicy ?? BEFORE_SEND_LIMITS.defaultPolicy };
        // A concurrent set or delete between the read and the write is seen by the write: read again.
        for (let attempt = 0; attempt < 3; attempt++) {
          const existing = await ctx.store.beforeSend.get(params.appId);
          if (existing) {
            const updated: BeforeSendHook = { ...existing, ...setting, updatedAt: now };
            if ((await ctx.store.beforeSend.update(updated)) === 'not-found') continue;
            ctx.onWebhooksChanged(params.appId);
            return { status: 200, body: view(updated) };
          }
          const hook: BeforeSendHook = { appId: params.appId, ...setting, secret: newWebhookSecret(), createdAt: now, updatedAt: now };
          if ((await ctx.store.beforeSend.create(hook)) === 'exists') continue;
          ctx.log.info({ appId: hook.appId }, 'before-send hook set');
          ctx.onWebhooksChanged(params.appId);
          return { status: 201, body: { ...view(hook), secret: hook.secret } };
        }
        return new ApiError('UNAVAILABLE', 'the hook is being changed by another request; retry');
      },
    }),
    defineRoute({
      method: 'GET',
      path,
      operationId: 'getBeforeSendHook',
      summary: 'Get the application’s before-send hook (never the secret)',
      tags,
      params: AppParams,
      auth,
      responses: { 200: { description: 'The hook', schema: BeforeSendHookView }, ...common },
      handler: async ({ params, auth }) => {
        const found = await find(auth.accountId, params.appId);
        return found instanceof ApiError ? found : { status: 200, body: view(found) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path,
      operationId: 'deleteBeforeSendHook',
      summary: 'Remove the application’s before-send hook: messages are stored without asking it',
      tags,
      params: AppParams,
      auth,
      responses: { 204: { description: 'Removed' }, ...common },
      handler: async ({ params, auth }) => {
        const found = await find(auth.accountId, params.appId);
        if (found instanceof ApiError) return found;
        if ((await ctx.store.beforeSend.delete(params.appId)) === 'not-found') return notFound();
        ctx.log.info({ appId: params.appId }, 'before-send hook removed');
        ctx.onWebhooksChanged(params.appId);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: `${path}/secret`,
      operationId: 'revealBeforeSendSecret',
      summary: 'Reveal the before-send hook’s signing secret',
      tags,
      params: AppParams,
      auth,
      responses: { 200: { description: 'The secret', schema: WebhookSecret }, ...common },
      handler: async ({ params, auth }) => {
        const found = await find(auth.accountId, params.appId);
        return found instanceof ApiError ? found : { status: 200, body: { secret: found.secret } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: `${path}/secret/rotate`,
      operationId: 'rotateBeforeSendSecret',
      summary: 'Replace the before-send hook’s signing secret: calls from now on are signed with the new one',
      tags,
      params: AppParams,
      auth,
      responses: { 200: { description: 'The new secret', schema: WebhookSecret }, ...common },
      handler: async ({ params, auth }) => {
        const found = await find(auth.accountId, params.appId);
        if (found instanceof ApiError) return found;
        const updated: BeforeSendHook = { ...found, secret: newWebhookSecret(), updatedAt: ctx.now().toISOString() };
        if ((await ctx.store.beforeSend.update(updated)) === 'not-found') return notFound();
        ctx.log.info({ appId: params.appId }, 'before-send hook secret rotated');
        ctx.onWebhooksChanged(params.appId);
        return { status: 200, body: { secret: updated.secret } };
      },
    }),
  ];
}
