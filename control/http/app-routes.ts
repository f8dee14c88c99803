import { randomUUID } from 'node:crypto';
import { ApiError } from '../../common/errors/index.ts';
import { defineRoute, type AnyRoute } from '../../common/http/index.ts';
import { LIMITS, type ControlContext } from '../context.ts';
import type { Application, Cluster } from '../store/index.ts';
import { AppParams, ApplicationCreated, ApplicationDetail, ApplicationList, CreateAppBody, UpdateAppBody } from './schemas.ts';
import { createdView, detailView } from './views.ts';

const notFound = () => new ApiError('APP_NOT_FOUND', 'no such application in this account');

export function appRoutes(ctx: ControlContext): AnyRoute[] {
  const auth = { verify: ctx.tokens.authenticate, security: 'accessToken' };
  const clusterOf = async (app: Application): Promise<Cluster> => (await ctx.store.clusters.get(app.clusterId)) ?? ctx.demoCluster;

  return [
    defineRoute({
      method: 'POST',
      path: '/api/client/apps',
      operationId: 'createApplication',
      summary: 'Create an application',
      tags: ['applications'],
      body: CreateAppBody,
      auth,
      responses: {
        201: { description: 'Created, bound to the demo cluster', schema: ApplicationCreated },
        400: { description: 'Invalid name' },
        401: { description: 'Token missing or invalid' },
        403: { description: `The account already has ${LIMITS.applicationsPerAccount} applications (APP_LIMIT_REACHED)` },
      },
      handler: async ({ body, auth }) => {
        const now = ctx.now().toISOString();
        const app: Application = {
          id: randomUUID(),
          clientId: auth.accountId,
          name: body.name,
          status: 'ACTIVE',
          type: 'DEMO',
          tier: 'DEMO',
          clusterId: ctx.demoCluster.id,
          createdAt: now,
          updatedAt: now,
        };
        if ((await ctx.store.applications.create(app, LIMITS.applicationsPerAccount)) === 'limit') {
          return new ApiError('APP_LIMIT_REACHED', `an account may have at most ${LIMITS.applicationsPerAccount} demo applications; delete one first`);
        }
        return { status: 201, body: createdView(app) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/client/apps',
      operationId: 'listApplications',
      summary: 'List the account’s applications, oldest first',
      tags: ['applications'],
      auth,
      responses: { 200: { description: 'All applications of the account (at most 5)', schema: ApplicationList }, 401: { description: 'Token missing or invalid' } },
      handler: async ({ auth }) => {
        const apps = await ctx.store.applications.list(auth.accountId);
        return { status: 200, body: { applications: await Promise.all(apps.map(async (a) => detailView(a, await clusterOf(a)))) } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/client/apps/:appId',
      operationId: 'getApplication',
      summary: 'Get an application with its cluster endpoint',
      tags: ['applications'],
      params: AppParams,
      auth,
      responses: {
        200: { description: 'Detail form', schema: ApplicationDetail },
        400: { description: 'appId is not a UUID' },
        401: { description: 'Token missing or invalid' },
        404: { description: 'No such application in this account (APP_NOT_FOUND)' },
      },
      handler: async ({ params, auth }) => {
        const app = await ctx.store.applications.get(auth.accountId, params.appId);
        return app ? { status: 200, body: detailView(app, await clusterOf(app)) } : notFound();
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/client/apps/:appId',
      operationId: 'updateApplication',
      summary: 'Rename an application',
      tags: ['applications'],
      params: AppParams,
      body: UpdateAppBody,
      auth,
      responses: {
        200: { description: 'Updated; detail form', schema: ApplicationDetail },
        400: { description: 'Invalid name or appId' },
        401: { description: 'Token missing or invalid' },
        404: { description: 'No such application in this account' },
      },
      handler: async ({ params, body, auth }) => {
        const app = await ctx.store.applications.get(auth.accountId, params.appId);
        if (!app) return notFound();
        const updated: Application = { ...app, name: body.name, updatedAt: ctx.now().toISOString() };
        if ((await ctx.store.applications.update(updated)) === 'not-found') return notFound();
        return { status: 200, body: detailView(updated, await clusterOf(updated)) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/client/apps/:appId',
      operationId: 'deleteApplication',
      summary: 'Delete an application and revoke all its API keys',
      tags: ['applications'],
      params: AppParams,
      auth,
      responses: {
        204: { description: "Deleted; its keys, its users' tokens, refresh tokens and sockets stop working within a second on every node" },
        400: { description: 'appId is not a UUID' },
        401: { description: 'Token missing or invalid' },
        404: { description: 'No such application in this account' },
      },
      handler: async ({ params, auth }) => {
        const app = await ctx.store.applications.get(auth.accountId, params.appId);
        if (!app) return notFound();
        // Keys first: if the delete then fails, the application is left keyless, never keys ownerless.
        const keys = await ctx.store.keys.list(app.id);
        await ctx.store.keys.revokeAll(app.id, ctx.now().toISOString());
        for (const k of keys) ctx.onKeyRevoked(app.id, k.id);
        if ((await ctx.store.applications.delete(auth.accountId, app.id)) === 'not-found') return notFound();
        ctx.onAppDeleted(app.id);
        for (const hook of await ctx.store.webhooks.list(app.id)) await ctx.store.webhooks.delete(app.id, hook.id);
        await ctx.store.beforeSend.delete(app.id);
        ctx.onWebhooksChanged(app.id);
        await ctx.store.attachmentSettings.delete(app.id);
        ctx.onAttachmentSettingsChanged(app.id);
        await ctx.store.pushSettings.delete(app.id);
        ctx.onPushSettingsChanged(app.id);
        // Usage goes with it; a node's last flush may still add a few counts under the unused id.
        await ctx.store.usage.forget(app.id).catch((error: unknown) => ctx.log.warn({ appId: app.id, err: String(error) }, 'cannot forget usage of a deleted application'));
        ctx.log.info({ appId: app.id, revokedKeys: keys.length }, 'application deleted');
        return { status: 204 };
      },
    }),
  ];
}
