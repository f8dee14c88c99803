import uws from 'uWebSockets.js';
import Type from 'typebox';
import {
  ApiKeyVerifier,
  attachRoutes,
  buildOpenApi,
  closeApp,
  createMetrics,
  defineRoute,
  listen,
  opsRoutes,
  parseOrigins,
  type AnyRoute,
  type Config,
  type KeyStatusSource,
  type Listening,
  type Logger,
  type PublicKeySource,
} from '../common/index.ts';

export interface NodeServiceOptions {
  config: Readonly<Config>;
  log: Logger;
  /** Where API keys are checked: the control service's public keys and key status. */
  keys: PublicKeySource;
  keyStatus: KeyStatusSource;
  publicUrl: string;
}

export interface NodeService {
  routes: readonly AnyRoute[];
  /** Drop a key's cached status at once (called on revocation announcements). */
  invalidateKey(appId: string, keyId: string): void;
  listen(host: string, port: number): Promise<Listening>;
  /** Stops accepting, lets in-flight requests finish (up to 5 s), then closes every socket. */
  close(): Promise<void>;
}

export const NODE_VERSION = '1.0.0';

const WhoAmI = Type.Object({ appId: Type.String({ format: 'uuid' }), keyId: Type.String({ format: 'uuid' }), cluster: Type.String() });

/** A cluster node: REST and (later) WebSocket on one uWS app. */
export async function createNodeService(options: NodeServiceOptions): Promise<NodeService> {
  const { config, log } = options;
  const apiKeys = new ApiKeyVerifier({ clusterName: config.CLUSTER_NAME, keys: options.keys, status: options.keyStatus, statusTtlMs: config.KEY_STATUS_TTL_MS });
  await apiKeys.refreshKeys();
  const metrics = createMetrics('node');
  let closing = false;
  const routes: AnyRoute[] = [
    defineRoute({
      method: 'GET',
      path: '/api/server/whoami',
      operationId: 'whoAmI',
      summary: 'Check an API key: which application and key it is',
      tags: ['server'],
      auth: { verify: apiKeys.authenticate, security: 'apiKey' },
      responses: { 200: { description: 'The key is valid for this cluster', schema: WhoAmI }, 401: { description: 'Key missing, invalid, revoked or for another cluster' } },
      handler: ({ auth }) => ({ status: 200, body: { appId: auth.appId, keyId: auth.keyId, cluster: config.CLUSTER_NAME } }),
    }),
    ...opsRoutes({
      metrics,
      ready: () => !closing,
      openApi: () =>
        buildOpenApi(routes, {
          title: 'Chat service — cluster interface',
          version: NODE_VERSION,
          description: 'Chat users, chats and messages. Errors are application/problem+json with a stable `code`.',
          serverUrl: options.publicUrl,
          securitySchemes: {
            apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'API key (server side only): Authorization: Bearer <apiKey>.' },
          },
        }),
    }),
  ];
  const app = uws.App();
  const http = attachRoutes(app, {
    routes,
    maxBodyBytes: config.MAX_BODY_BYTES,
    cors: { origins: parseOrigins(config.CORS_ORIGINS) },
    trustProxy: config.TRUST_PROXY,
    log,
    observe: metrics.observeHttp,
  });
  let listening: Listening | undefined;
  return {
    routes,
    invalidateKey: (appId, keyId) => apiKeys.invalidate(appId, keyId),
    listen: async (host, port) => (listening = await listen(app, host, port)),
    close: async () => {
      closing = true;
      listening?.close();
      await http.drained(5_000);
      closeApp(app);
    },
  };
}
