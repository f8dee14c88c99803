import uws from 'uWebSockets.js';
import {
  attachRoutes,
  closeApp,
  buildOpenApi,
  createMetrics,
  listen,
  loadKeyRing,
  opsRoutes,
  parseOrigins,
  watchKeyRing,
  WindowLimiter,
  type AnyRoute,
  type Config,
  type Listening,
  type Logger,
  type PublicKey,
} from '../common/index.ts';
import { GuessThrottle } from './auth/guess-throttle.ts';
import { ControlTokens } from './auth/tokens.ts';
import type { ControlContext } from './context.ts';
import { serveDashboard } from './dashboard/index.ts';
import { appRoutes } from './http/app-routes.ts';
import { authRoutes } from './http/auth-routes.ts';
import { keyRoutes } from './http/key-routes.ts';
import { metaRoutes } from './http/meta-routes.ts';
import { mfaRoutes } from './http/mfa-routes.ts';
import { profileRoutes } from './http/profile-routes.ts';
import { usageRoutes } from './http/usage-routes.ts';
import { webhookRoutes } from './http/webhook-routes.ts';
import { beforeSendRoutes } from './http/before-send-routes.ts';
import { blocklistRoutes } from './http/blocklist-routes.ts';
import { attachmentSettingsRoutes } from './http/attachment-settings-routes.ts';
import { pushRoutes } from './http/push-routes.ts';
import type { BlocklistAdmin } from '../common/moderation/index.ts';
import type { ControlStore } from './store/index.ts';

export interface ControlServiceOptions {
  config: Readonly<Config>;
  store: ControlStore;
  log: Logger;
  /** The cluster's public URL, returned to integrators as `clusterEndpoint`. */
  clusterEndpoint: string;
  /** Public URL of this service, for the OpenAPI `servers` entry. */
  publicUrl: string;
  onKeyRevoked?: (appId: string, keyId: string) => void;
  onAppDeleted?: (appId: string) => void;
  onWebhooksChanged?: (appId: string) => void;
  onAttachmentSettingsChanged?: (appId: string) => void;
  onPushSettingsChanged?: (appId: string) => void;
  /** Applications' blocklists, kept with the nodes' moderation data; absent: the management routes answer 503. */
  blocklists?: BlocklistAdmin;
}

export interface ControlService {
  routes: readonly AnyRoute[];
  /** The verification keys nodes need, for an in-process node. */
  publicKeys(): Promise<PublicKey[]>;
  listen(host: string, port: number): Promise<Listening>;
  /** Stops accepting, lets in-flight requests finish (up to 5 s), then closes every socket. */
  close(): Promise<void>;
}

export const CONTROL_VERSION = '1.0.0';

/**
 * Builds the control service: creates the signing key on first start (and reuses it after, reloading
 * the keys every SIGNING_KEY_REFRESH_SECONDS so a rotation needs no restart), makes sure the demo
 * cluster is registered with the configured endpoint, and serves the management API.
 */
export async function createControlService(options: ControlServiceOptions): Promise<ControlService> {
  const { config, store, log } = options;
  const signingKeys = await loadKeyRing(store.signingKeys);
  const stopWatchingKeys = watchKeyRing(signingKeys, store.signingKeys, config.SIGNING_KEY_REFRESH_SECONDS * 1000, log.child({ component: 'signing-keys' }));
  const demoCluster = await store.clusters.upsert(config.CLUSTER_NAME, options.clusterEndpoint, new Date().toISOString());
  const windowMs = config.LOGIN_WINDOW_SECONDS * 1000;
  const ctx: ControlContext = {
    config,
    store,
    log,
    tokens: new ControlTokens(signingKeys, store),
    demoCluster,
    throttles: {
      passwordGuesses: new GuessThrottle(config.LOGIN_MAX_FAILURES, windowMs),
      authPerAddress: new WindowLimiter(config.LOGIN_MAX_PER_ADDRESS, windowMs),
    },
    onKeyRevoked: options.onKeyRevoked ?? (() => {}),
    onAppDeleted: options.onAppDeleted ?? (() => {}),
    onWebhooksChanged: options.onWebhooksChanged ?? (() => {}),
    onAttachmentSettingsChanged: options.onAttachmentSettingsChanged ?? (() => {}),
    onPushSettingsChanged: options.onPushSettingsChanged ?? (() => {}),
    ...(options.blocklists ? { blocklists: options.blocklists } : {}),
    now: () => new Date(),
  };
  const metrics = createMetrics('control');
  const apiRoutes = [...authRoutes(ctx), ...appRoutes(ctx), ...keyRoutes(ctx), ...profileRoutes(ctx), ...mfaRoutes(ctx), ...usageRoutes(ctx), ...webhookRoutes(ctx), ...beforeSendRoutes(ctx), ...blocklistRoutes(ctx), ...attachmentSettingsRoutes(ctx), ...pushRoutes(ctx), ...metaRoutes(ctx)];
  let closing = false;
  const routes: AnyRoute[] = [
    ...apiRoutes,
    ...opsRoutes({
      metrics,
      ready: () => !closing,
      openApi: () =>
        buildOpenApi(routes, {
          title: 'Chat service — management interface',
          version: CONTROL_VERSION,
          description: 'Accounts, applications and API keys. Errors are application/problem+json with a stable `code`.',
          serverUrl: options.publicUrl,
          securitySchemes: {
            accessToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Access token from register, login or refresh (15 minutes).' },
          },
        }),
    }),
  ];
  const app = uws.App();
  const http = attachRoutes(app, {
    routes,
    maxBodyBytes: config.MAX_BODY_BYTES,
    cors: { origins: parseOrigins(config.CORS_ORIGINS) },
    trustedProxyHops: config.TRUST_PROXY ? config.TRUSTED_PROXY_HOPS : 0,
    log,
    observe: metrics.observeHttp,
  });
  // The dashboard page at `/` and its bundle under /dashboard/, outside the API's route table.
  serveDashboard(app, { log: log.child({ component: 'dashboard' }), observe: metrics.observeHttp });
  let listening: Listening | undefined;
  return {
    routes,
    publicKeys: async () => (await store.signingKeys.list()).map(({ kid, publicKeyPem }) => ({ kid, publicKeyPem })),
    listen: async (host, port) => (listening = await listen(app, host, port)),
    close: async () => {
      closing = true;
      stopWatchingKeys();
      listening?.close();
      await http.drained(5_000);
      closeApp(app);
    },
  };
}
