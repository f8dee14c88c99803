import { randomUUID } from 'node:crypto';
import { ApiError } from '../../common/errors/index.ts';
import { defineRoute, type AnyRoute } from '../../common/http/index.ts';
import { hashSecret } from '../auth/secrets.ts';
import { LIMITS, type ControlContext } from '../context.ts';
import type { ApiKeyRecord, Application, Cluster } from '../store/index.ts';
import { ApiKeyCreated, ApiKeyList, AppParams, KeyParams } from './schemas.ts';
import { keySummaryView } from './views.ts';

const appNotFound = () => new ApiError('APP_NOT_FOUND', 'no such application in this account');
const keyNotFound = () => new ApiError('KEY_NOT_FOUND', 'no such API key in this application');
const suspended = () => new ApiError('APP_SUSPENDED', 'the application is suspended and cannot receive new API keys');

/**
 * An API key is a JWT signed by the control service: `sub` is the application, `jti` the key,
 * `aud` the cluster's name, no expiry. Nodes verify it offline and check `jti` is not revoked.
 */
function mintKey(ctx: ControlContext, app: Application, cluster: Cluster): { record: ApiKeyRecord; token: string } {
  const id = randomUUID();
  const token = ctx.tokens.issuer.issue({ kind: 'api_key', subject: app.id, audience: cluster.name, jwtId: id });
  const record: ApiKeyRecord = {
    id,
    appId: app.id,
    tokenHash: hashSecret(token),
    keyPrefix: token.slice(0, 8),
    keySuffix: token.slice(-4),
    audience: cluster.name,
    tier: app.tier,
    createdAt: ctx.now().toISOString(),
  };
  return { record, token };
}

const createdBody = (record: ApiKeyRecord, token: string) => ({
  id: record.id,
  token,
  keyPrefix: record.keyPrefix,
  keySuffix: token.slice(-4),
  audience: record.audience,
  tier: record.tier,
  createdAt: record.createdAt,
});

export function keyRoutes(ctx: ControlContext): AnyRoute[] {
  const auth = { verify: ctx.tokens.authenticate, security: 'accessToken' };
  const clusterOf = async (app: Application) => (await ctx.store.clusters.get(app.clusterId)) ?? ctx.demoCluster;

  return [
    defineRoute({
      method: 'POST',
      path: '/api/client/apps/:appId/keys',
      operationId: 'createApiKey',
      summary: 'Create an API key (the token is shown only in this response)',
      tags: ['api keys'],
      params: AppParams,
      auth,
      responses: {
        201: { description: 'Created', schema: ApiKeyCreated },
        400: { description: 'appId is not a UUID' },
        401: { description: 'Token missing or invalid' },
        403: { description: `The application has ${LIMITS.activeKeysPerApplication} active keys (KEY_LIMIT_REACHED); revoke one first` },
        404: { description: 'No such application in this account' },
        409: { description: 'The application is suspended (APP_SUSPENDED)' },
      },
      handler: async ({ params, auth }) => {
        const app = await ctx.store.applications.get(auth.accountId, params.appId);
        if (!app) return appNotFound();
        if (app.status === 'SUSPENDED') return suspended();
        const { record, token } = mintKey(ctx, app, await clusterOf(app));
        if ((await ctx.store.keys.create(record, LIMITS.activeKeysPerApplication)) === 'limit') {
          return new ApiError('KEY_LIMIT_REACHED', `an application may have at most ${LIMITS.activeKeysPerApplication} active API keys; revoke one first`);
        }
        ctx.log.info({ appId: app.id, keyId: record.id }, 'api key created');
        return { status: 201, body: createdBody(record, token) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/client/apps/:appId/keys',
      operationId: 'listApiKeys',
      summary: 'List the application’s API keys, active and revoked, oldest first (never the token)',
      tags: ['api keys'],
      params: AppParams,
      auth,
      responses: {
        200: { description: 'Keys', schema: ApiKeyList },
        400: { description: 'appId is not a UUID' },
        401: { description: 'Token missing or invalid' },
        404: { description: 'No such application in this account' },
      },
      handler: async ({ params, auth }) => {
        const app = await ctx.store.applications.get(auth.accountId, params.appId);
        if (!app) return appNotFound();
        const [keys, lastUsed] = await Promise.all([ctx.store.keys.list(app.id), ctx.store.usage.keysLastUsed(app.id)]);
        return { status: 200, body: { keys: keys.map((k) => keySummaryView(k, lastUsed[k.id])) } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/client/apps/:appId/keys/:keyId',
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key (idempotent); clusters refuse it within a second',
      tags: ['api keys'],
      params: KeyParams,
      auth,
      responses: {
        204: { description: 'Revoked (or already revoked); frees an active-key slot' },
        400: { description: 'appId or keyId is not a UUID' },
        401: { description: 'Token missing or invalid' },
        404: { description: 'No such application or key in this account' },
      },
      handler: async ({ params, auth }) => {
        const app = await ctx.store.applications.get(auth.accountId, params.appId);
        if (!app) return appNotFound();
        if ((await ctx.store.keys.revoke(app.id, params.keyId, ctx.now().toISOString())) === 'not-found') return keyNotFound();
        ctx.onKeyRevoked(app.id, params.keyId);
        ctx.log.info({ appId: app.id, keyId: params.keyId }, 'api key revoked');
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/client/apps/:appId/keys/:keyId/rotate',
      operationId: 'rotateApiKey',
      summary: 'Replace an API key: the old one is revoked at once, a new one is returned',
      tags: ['api keys'],
      params: KeyParams,
      auth,
      responses: {
        201: { description: 'The new key (token shown only here)', schema: ApiKeyCreated },
        400: { description: 'appId or keyId is not a UUID' },
        401: { description: 'Token missing or invalid' },
        404: { description: 'No such application or key in this account' },
        409: { description: 'The key is already revoked (KEY_REVOKED) or the application is suspended (APP_SUSPENDED)' },
      },
      handler: async ({ params, auth }) => {
        const app = await ctx.store.applications.get(auth.accountId, params.appId);
        if (!app) return appNotFound();
        if (app.status === 'SUSPENDED') return suspended();
        const { record, token } = mintKey(ctx, app, await clusterOf(app));
        const result = await ctx.store.keys.rotate(app.id, params.keyId, record, ctx.now().toISOString());
        if (result === 'not-found') return keyNotFound();
        if (result === 'revoked') return new ApiError('KEY_REVOKED', 'a revoked key cannot be rotated; create a new key');
        ctx.onKeyRevoked(app.id, params.keyId);
        ctx.log.info({ appId: app.id, oldKeyId: params.keyId, keyId: record.id }, 'api key rotated');
        return { status: 201, body: createdBody(record, token) };
      },
    }),
  ];
}
