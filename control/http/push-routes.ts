import { ApiError } from '../../common/index.ts';
import { defineRoute, type AnyRoute } from '../../common/http/index.ts';
import { ApnsBody, apnsProblems, FcmBody, newVapidKeys, PUSH_DELIVERIES_KEPT, PushOptionsBody, pushSettingsView, PushSettingsView, serviceAccountOf, WebPushBody, type PushDeliveryRecord } from '../../common/push/index.ts';
import type { ControlContext } from '../context.ts';
import { AppParams, PushDeliveriesQuery, PushDeliveryList } from './schemas.ts';

const appNotFound = () => new ApiError('APP_NOT_FOUND', 'no such application in this account');
const notSet = (provider: string) => new ApiError('PUSH_PROVIDER_NOT_SET', `the application has no ${provider} settings`);
const names = { 'web-push': 'Web Push', apns: 'APNs', fcm: 'FCM' } as const;
/** Attempts listed when the query names no limit (at most 100, as for webhook deliveries). */
const DEFAULT_DELIVERIES = 50;
/** An attempt as the API lists it: without `appId`, which the path names. */
const deliveryView = ({ appId: _appId, ...attempt }: PushDeliveryRecord) => attempt;

/**
 * An application's push providers (README, "Push notifications"): Web Push (a VAPID key pair the
 * service makes, once), APNs (a token key) and FCM (a service account), and whether pushes carry
 * ids only. A provider's secret is taken once and never shown again; a set is checked as a whole
 * (the key parsed, the service account read) and refused with the field named; every change is
 * announced (`onPushSettingsChanged`), so the nodes use it for the next push. The delivery log
 * lists the attempts the nodes recorded (ids and outcomes, never a message).
 */
export function pushRoutes(ctx: ControlContext): AnyRoute[] {
  const auth = { verify: ctx.tokens.authenticate, security: 'accessToken' };
  const tags = ['push'];
  const base = '/api/client/apps/:appId/push';
  const errors = {
    401: { description: 'Token missing or invalid' },
    404: { description: 'No such application in this account (APP_NOT_FOUND)' },
  };
  const invalid = { 400: { description: 'Invalid fields: the key or service account unreadable, of the wrong kind, or a field missing (VALIDATION_FAILED, naming the field)' } };
  const owned = async (accountId: string, appId: string) => (await ctx.store.applications.get(accountId, appId)) !== undefined;
  const view = async (appId: string) => ({ status: 200 as const, body: pushSettingsView(await ctx.store.pushSettings.get(appId)) });
  const changed = (appId: string) => ctx.onPushSettingsChanged(appId);
  return [
    defineRoute({
      method: 'GET',
      path: base,
      operationId: 'getPushSettings',
      summary: 'The application’s push providers, without their secrets',
      tags,
      params: AppParams,
      auth,
      responses: { 200: { description: 'The settings (no provider until one is set)', schema: PushSettingsView }, ...errors },
      handler: async ({ params, auth }) => ((await owned(auth.accountId, params.appId)) ? view(params.appId) : appNotFound()),
    }),
    defineRoute({
      method: 'GET',
      path: `${base}/deliveries`,
      operationId: 'listPushDeliveries',
      summary: 'The application’s most recent push attempts, newest first (ids and outcomes, never the message)',
      description:
        `Every attempt a node made to hand a push to Web Push, APNs or FCM, with how the push service answered; \`provider\` keeps one provider's. ` +
        `The log keeps the application's last ${PUSH_DELIVERIES_KEPT} attempts (on Cassandra, those of the last 7 days); deleting the application deletes it.`,
      tags,
      params: AppParams,
      query: PushDeliveriesQuery,
      auth,
      responses: {
        200: { description: 'Attempts, newest first', schema: PushDeliveryList },
        400: { description: 'A provider other than webPush, apns or fcm, or a limit outside 1–100 (VALIDATION_FAILED, naming the query field)' },
        ...errors,
      },
      handler: async ({ params, query, auth }) => {
        if (!(await owned(auth.accountId, params.appId))) return appNotFound();
        const list = await ctx.store.pushSettings.deliveries(params.appId, query.provider, query.limit ?? DEFAULT_DELIVERIES);
        return { status: 200, body: { deliveries: list.map(deliveryView) } };
      },
    }),
    defineRoute({
      method: 'PATCH',
      path: base,
      operationId: 'setPushOptions',
      summary: 'Whether pushes carry ids only (private mode)',
      tags,
      params: AppParams,
      body: PushOptionsBody,
      auth,
      responses: { 200: { description: 'Set', schema: PushSettingsView }, ...errors },
      handler: async ({ params, body, auth }) => {
        if (!(await owned(auth.accountId, params.appId))) return appNotFound();
        await ctx.store.pushSettings.put(params.appId, 'options', body.privateMode, ctx.now().toISOString());
        changed(params.appId);
        return view(params.appId);
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${base}/web-push`,
      operationId: 'setWebPush',
      summary: 'Turn on Web Push: the service makes the application’s VAPID key pair (once) and shows its public key',
      description:
        'The first set makes a P-256 key pair; later sets change only the subject, so browsers’ subscriptions (made with the public key) stay valid. ' +
        'Removing Web Push and setting it again makes a new pair: every subscription must then be made again.',
      tags,
      params: AppParams,
      body: WebPushBody,
      auth,
      responses: { 200: { description: 'Set', schema: PushSettingsView }, ...invalid, ...errors },
      handler: async ({ params, body, auth }) => {
        if (!(await owned(auth.accountId, params.appId))) return appNotFound();
        const at = ctx.now().toISOString();
        const created = await ctx.store.pushSettings.createWebPush(params.appId, { subject: body.subject, ...newVapidKeys(), createdAt: at }, at);
        if (created === 'exists') await ctx.store.pushSettings.updateWebPush(params.appId, body.subject, at);
        changed(params.appId);
        return view(params.appId);
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${base}/apns`,
      operationId: 'setApns',
      summary: 'Set APNs (token authentication: key id, team id, .p8 key, topic, environment)',
      tags,
      params: AppParams,
      body: ApnsBody,
      auth,
      responses: { 200: { description: 'Set (the key is not shown)', schema: PushSettingsView }, ...invalid, ...errors },
      handler: async ({ params, body, auth }) => {
        const problems = apnsProblems(body);
        if (problems.length > 0) return new ApiError('VALIDATION_FAILED', `key ${problems[0]!.message}`, { errors: problems });
        if (!(await owned(auth.accountId, params.appId))) return appNotFound();
        const at = ctx.now().toISOString();
        await ctx.store.pushSettings.put(params.appId, 'apns', { ...body, updatedAt: at }, at);
        changed(params.appId);
        return view(params.appId);
      },
    }),
    defineRoute({
      method: 'PUT',
      path: `${base}/fcm`,
      operationId: 'setFcm',
      summary: 'Set FCM (HTTP v1: the Firebase service account’s JSON key)',
      tags,
      params: AppParams,
      body: FcmBody,
      auth,
      responses: { 200: { description: 'Set (the private key is not shown)', schema: PushSettingsView }, ...invalid, ...errors },
      handler: async ({ params, body, auth }) => {
        const account = serviceAccountOf(body.serviceAccount, ctx.config.PUSH_ALLOW_LOOPBACK);
        if (Array.isArray(account)) return new ApiError('VALIDATION_FAILED', `${account[0]!.path.slice('/body/'.length)} ${account[0]!.message}`, { errors: account });
        if (!(await owned(auth.accountId, params.appId))) return appNotFound();
        const at = ctx.now().toISOString();
        await ctx.store.pushSettings.put(params.appId, 'fcm', { ...account, updatedAt: at }, at);
        changed(params.appId);
        return view(params.appId);
      },
    }),
    ...(['web-push', 'apns', 'fcm'] as const).map((provider) =>
      defineRoute({
        method: 'DELETE',
        path: `${base}/${provider}`,
        operationId: `remove${provider === 'web-push' ? 'WebPush' : provider === 'apns' ? 'Apns' : 'Fcm'}`,
        summary: `Remove ${names[provider]} and its secret: nothing more is pushed through it${provider === 'web-push' ? ' (setting it again makes a new key pair: browsers must subscribe again)' : ''}`,
        tags,
        params: AppParams,
        auth,
        responses: { 204: { description: 'Removed' }, 401: errors[401], 404: { description: 'No such application (APP_NOT_FOUND), or the provider is not set (PUSH_PROVIDER_NOT_SET)' } },
        handler: async ({ params, auth }) => {
          if (!(await owned(auth.accountId, params.appId))) return appNotFound();
          const at = ctx.now().toISOString();
          if (provider === 'web-push') {
            if ((await ctx.store.pushSettings.updateWebPush(params.appId, undefined, at)) === 'not-found') return notSet(names[provider]);
          } else {
            if (!(await ctx.store.pushSettings.get(params.appId))?.[provider]) return notSet(names[provider]);
            await ctx.store.pushSettings.put(params.appId, provider, undefined, at);
          }
          changed(params.appId);
          return { status: 204 };
        },
      }),
    ),
  ];
}
