import { pushRoutes, PushSettingsCache, pushWorkers, type PushLogSink, type PushSettingsSource } from './push/index.ts';
import { join } from 'node:path';
import uws from 'uWebSockets.js';
import Type from 'typebox';
import {
  ApiError,
  ApiKeyVerifier,
  attachRoutes,
  buildOpenApi,
  closeApp,
  createMetrics,
  defineRoute,
  listen,
  loadKeyRing,
  LoadShedder,
  opsRoutes,
  parseOrigins,
  publicUrl,
  watchKeyRing,
  WindowLimiter,
  type AnyRoute,
  type Config,
  type KeyStatusSource,
  type Listening,
  type Logger,
  type PublicKeySource,
  type RequestInfo,
} from '../common/index.ts';
import { UserTokens } from './auth/user-tokens.ts';
import { decodeControl, encodeControl, type Bus, type Membership, type Presence } from './bus/index.ts';
import { ActorRegistry, AppActionBudget, boundedQueue, CHAT_OPS, ChatCap, ChatService, countedRefusals, runHere, SendAdmission, UserWriteLimits, type EventSink, type LocalChatOps } from './chat/index.ts';
import { appGone, SessionGuard, type AppStatusSource } from './auth/session-guard.ts';
import { ChatPlacement, clusterSecret, ClusterEvents, ClusterRouter, RpcClient, rpcAddress, RpcServer, type RpcHandler } from './cluster/index.ts';
import type { NodeContext } from './context.ts';
import { chatRoutes } from './http/chat-routes.ts';
import { pinRoutes } from './http/pin-routes.ts';
import { threadRoutes } from './http/thread-routes.ts';
import { searchRoutes } from './http/search-routes.ts';
import { BanGuard, BlockGuard, Blocklists, blockRoutes, chatModerationRoutes, flagRoutes, moderationRoutes, NodeBlocklistAdmin } from './moderation/index.ts';
import { attachmentRoutes } from './http/attachment-routes.ts';
import { attachmentsOf, FileDeletions, LocalObjectStore, serveLocalFiles, type AttachmentSettingsSource, type ObjectStore } from './files/index.ts';
import { messageRoutes } from './http/message-routes.ts';
import { userRoutes } from './http/user-routes.ts';
import { nodeMetrics } from './metrics.ts';
import { Admission, attachGateway, closeCodes, LocalReplays, RealtimeHub, type Replays } from './realtime/index.ts';
import type { NodeStore } from './store/index.ts';
import { UsageMeter } from './usage/meter.ts';
import type { UsageSink } from '../common/usage/index.ts';
import { ownerOf } from './bus/index.ts';
import { NodeWebhooks, type WebhookSource } from './webhooks/index.ts';
import type { BlocklistAdmin } from '../common/moderation/index.ts';
import { BeforeSendHooks, type BeforeSendSource } from './webhooks/index.ts';

export interface NodeServiceOptions {
  config: Readonly<Config>;
  log: Logger;
  store: NodeStore;
  /** Where API keys are checked: the control service's public keys and key status. */
  keys: PublicKeySource;
  keyStatus: KeyStatusSource;
  /** Whether an application still exists (user sessions end with it). */
  appStatus: AppStatusSource;
  publicUrl: string;
  /** Absent standalone. In a cluster: how this node meets the others. */
  cluster?: NodeCluster;
  /** Where usage counts go every USAGE_FLUSH_SECONDS (the control store); absent: not kept. */
  usage?: UsageSink;
  /** The attachment bytes each application stores, as usage counted them (the control store): what ATTACHMENT_APP_MAX_TOTAL_BYTES is checked against; absent: no limit. */
  fileUsage?: { storedBytes(appId: string): Promise<number> };
  /** The applications' webhook endpoints and delivery log (the control store); absent: no webhooks. */
  webhooks?: WebhookSource;
  /** The applications' before-send hooks (the control store); absent: messages are stored unasked. */
  beforeSend?: BeforeSendSource;
  /** Where attachment files live (ATTACHMENTS_STORE); absent: attachments are off (503). */
  files?: ObjectStore;
  /** Each application's attachment settings (the control store); absent: the deployment's limits apply to all. */
  attachmentSettings?: AttachmentSettingsSource;
  /** Each application's push settings (the control store); absent: no application has push. */
  pushSettings?: PushSettingsSource;
  /** Where push attempts are logged (the control store), for the management API and the dashboard. */
  pushLog?: PushLogSink;
}

/** What a node of a cluster shares with the others (see bin/cluster.ts, which builds it). */
export interface NodeCluster {
  nodeId: string;
  bus: Bus;
  membership: Membership;
  presence: Presence;
  /** How long an operation keeps retrying while its chat's owner cannot be reached. */
  failoverMs: number;
}

export interface NodeService {
  routes: readonly AnyRoute[];
  /** Drop a key's cached status at once (called on revocation announcements). */
  invalidateKey(appId: string, keyId: string): void;
  /** An application was deleted (in this process): its users' sessions end and their sockets close. */
  appDeleted(appId: string): void;
  /** An application's webhook endpoints or before-send hook changed (in this process): cached copies are dropped. */
  webhooksChanged(appId: string): void;
  /** An application's attachment settings changed (in this process): the cached copy is dropped. */
  attachmentSettingsChanged(appId: string): void;
  /** An application's push settings changed (in this process): the cached copy is dropped. */
  pushSettingsChanged(appId: string): void;
  /** Applications' blocklists, as the dashboard changes them through the control service in this process. */
  blocklists: BlocklistAdmin;
  /**
   * Listens; in a cluster also opens the node-to-node listener (NODE_RPC_PORT, not the public
   * port), then joins the live node list with its address (NODE_RPC_ADDRESS, or HOST and the bound
   * port), so no chat is placed here before it can serve.
   */
  listen(host: string, port: number): Promise<Listening>;
  /**
   * Graceful shutdown: stop accepting, finish in-flight requests, make every pending write durable,
   * then close sockets with 4000 (reconnect) so clients resume elsewhere or after the restart.
   */
  close(): Promise<void>;
}

export const NODE_VERSION = '1.0.0';

const WhoAmI = Type.Object({ appId: Type.String({ format: 'uuid' }), keyId: Type.String({ format: 'uuid' }), cluster: Type.String() });

export async function createNodeService(options: NodeServiceOptions): Promise<NodeService> {
  const { config, log, store } = options;
  const now = () => new Date();
  const apiKeys = new ApiKeyVerifier({ clusterName: config.CLUSTER_NAME, keys: options.keys, status: options.keyStatus, statusTtlMs: config.KEY_STATUS_TTL_MS });
  await apiKeys.refreshKeys();
  // The keys every node shares (user JWTs, the cluster key), reloaded so a rotation needs no restart.
  const signingKeys = await loadKeyRing(store.signingKeys);
  const stopWatchingKeys = watchKeyRing(signingKeys, store.signingKeys, config.SIGNING_KEY_REFRESH_SECONDS * 1000, log.child({ component: 'signing-keys' }));
  const tokens = new UserTokens(signingKeys, config.CLUSTER_NAME, config.USER_JWT_TTL_SECONDS);
  const app = uws.App();
  const metrics = createMetrics('node');
  let actors: ActorRegistry | undefined;
  const m = nodeMetrics(metrics, () => actors?.size ?? 0, () => store.writeStats());
  const hub = new RealtimeHub(app, { eventOut: m.eventOut });
  const cluster = options.cluster;
  const closeSockets = (appId: string, userId: string, why: 'USER_DELETED' | 'USER_BANNED' = 'USER_DELETED') => {
    const { code, reason, reconnect } = closeCodes[why];
    for (const ws of [...hub.sockets(appId, userId)]) hub.end(ws, code, JSON.stringify({ reason, reconnect }));
  };
  const bans = new BanGuard(store.moderation);
  const blocks = new BlockGuard(store.moderation);
  const blocklists = new Blocklists(store.moderation);
  const sessions = new SessionGuard({
    apps: options.appStatus,
    users: { exists: async (appId, userId) => (await store.users.get(appId, userId)) !== undefined },
    banned: async (appId, userId) => (await bans.ban(appId, userId)) !== undefined,
    ttlMs: config.KEY_STATUS_TTL_MS,
  });
  // A ban announced by another node closes the user's sockets here once the store confirms it.
  const banAnnounced = (appId: string, userId: string) => {
    bans.changed(appId, userId);
    Promise.resolve(bans.ban(appId, userId)).then(
      (ban) => (ban ? closeSockets(appId, userId, 'USER_BANNED') : log.warn({ appId, userId }, 'bus: ignored a ban the store does not hold')),
      (error: unknown) => log.warn({ err: String(error), userId }, 'bus: cannot check a ban; the user is refused at its next request'),
    );
  };
  const appDeleted = (appId: string) => {
    sessions.appDeleted(appId);
    attachments?.appDeleted(appId).catch((error: unknown) => log.warn({ err: String(error), appId }, "cannot mark a deleted application's files for deletion"));
    const { code, reason, reconnect } = closeCodes.APP_DELETED;
    for (const ws of hub.appSockets(appId)) hub.end(ws, code, JSON.stringify({ reason, reconnect }));
  };
  const usage = new UsageMeter({
    ...(options.usage ? { sink: options.usage } : {}),
    nodeId: cluster?.nodeId ?? 'standalone',
    flushMs: config.USAGE_FLUSH_SECONDS * 1000,
    usersOnline: cluster ? (appId) => cluster.presence.usersOnline(appId) : (appId) => hub.appUsers(appId),
    localUsers: (appId) => hub.appUsers(appId).size,
    log: log.child({ component: 'usage' }),
  });
  const clusterEvents =
    cluster &&
    new ClusterEvents(cluster.bus, hub, log, closeSockets, {
      isMember: async (appId, chatId, userId) => (await store.chats.member(appId, chatId, userId)) !== undefined,
      userExists: async (appId, userId) => (await store.users.get(appId, userId)) !== undefined,
    });
  if (clusterEvents) hub.interest = clusterEvents;
  const events: EventSink = clusterEvents ?? hub;
  const replays: Replays = clusterEvents ?? new LocalReplays('standalone');
  const placement = cluster && new ChatPlacement(cluster.nodeId, cluster.membership);
  const usersOnline = cluster ? (appId: string) => cluster.presence.usersOnline(appId) : (appId: string) => hub.appUsers(appId);
  const beforeSend =
    options.beforeSend && new BeforeSendHooks({ source: options.beforeSend, ttlMs: config.KEY_STATUS_TTL_MS, allowInsecure: config.WEBHOOK_ALLOW_INSECURE_URLS, log: log.child({ component: 'before-send' }), now });
  // Cached per application: its webhook endpoints and before-send hook; dropped when they change.
  const attachments = options.files
    ? attachmentsOf(config, store, options.files, {
        appExists: (appId) => Promise.resolve(options.appStatus.isLive(appId)),
        storedBytes: (appId, bytes) => usage.filesStored(appId, bytes),
        ...(options.fileUsage
          ? { storedTotal: { stored: options.fileUsage.storedBytes, unflushed: (appId: string) => usage.unflushedFileBytes(appId), flushes: () => usage.flushes } }
          : {}),
        // The node that took an upload another finalizes stops holding its size at once.
        ...(cluster ? { released: (appId: string, uploadId: string) => cluster.bus.publish({ kind: 'control' }, encodeControl({ type: 'upload.released', appId, uploadId })) } : {}),
        // One node sweeps: the first live one by id.
        ...(cluster ? { sweepHere: async () => (await cluster.membership.live()).map((n) => n.nodeId).sort()[0] === cluster.nodeId } : {}),
        ...(options.attachmentSettings ? { settings: options.attachmentSettings } : {}),
        // With an outbox (webhooks read from the control store), deletions carry their files' deletion in it.
        ...(options.webhooks ? { deletionsInOutbox: true } : {}),
        settingsTtlMs: config.KEY_STATUS_TTL_MS,
        log: log.child({ component: 'attachments' }),
        now,
      })
    : undefined;
  const fileDeletions = attachments && options.webhooks ? new FileDeletions(attachments.sweeper, log.child({ component: 'attachments' })) : undefined;
  let webhooks: NodeWebhooks | undefined;
  const webhooksChanged = (appId: string) => {
    webhooks?.invalidate(appId);
    beforeSend?.invalidate(appId);
  };
  const pushSettings = new PushSettingsCache(options.pushSettings, config.KEY_STATUS_TTL_MS);
  // Pushes ride the webhook outbox: with no control store to read endpoints from, there are neither.
  const push = options.webhooks && options.pushSettings ? pushWorkers({ config, store, settings: pushSettings, usersOnline, registry: metrics.registry, ...(options.pushLog ? { deliveryLog: options.pushLog } : {}), log: log.child({ component: 'push' }) }) : undefined;
  if (options.webhooks) {
    webhooks = new NodeWebhooks({
      store,
      source: options.webhooks,
      usersOnline,
      // A dead node's outbox is delivered by the one live node it hashes to; standalone, every
      // other owner is a previous run of this process.
      adopts: (owner) => {
        if (!placement) return owner !== store.writers.self.id;
        const live = placement.nodes().map((n) => n.nodeId);
        return live.length > 0 && !live.includes(owner) && ownerOf(`webhook-outbox/${owner}`, live) === cluster!.nodeId;
      },
      changed: (appId) => {
        webhooksChanged(appId);
        cluster?.bus.publish({ kind: 'control' }, encodeControl({ type: 'webhooks.changed', appId }));
      },
      allowInsecure: config.WEBHOOK_ALLOW_INSECURE_URLS,
      unreadWindowMs: config.WEBHOOK_UNREAD_WINDOW_SECONDS * 1000,
      cacheTtlMs: config.KEY_STATUS_TTL_MS,
      consumers: [...(push ? [push.delivery] : []), ...(fileDeletions ? [fileDeletions] : [])],
      log: log.child({ component: 'webhooks' }),
    });
  }
  const chatCap = new ChatCap(store.chats, config.USER_CHATS_MAX);
  attachments?.sweeper.start(config.ATTACHMENT_SWEEP_SECONDS * 1000);
  actors = new ActorRegistry(
    {
      store,
      events,
      now,
      chatCap,
      observeAck: m.observeAck,
      observeWrite: m.observeWrite,
      admission: countedRefusals(boundedQueue(), m.busyRefused),
      messagesStored: (appId, n) => usage.messagesStored(appId, n),
      ...(webhooks ? { webhooks } : {}),
      ...(attachments ? { attachments } : {}),
      blocks,
    },
    {
      idleMs: config.ACTOR_IDLE_SECONDS * 1000,
      ...(placement ? { placedElsewhere: (appId: string, chatId: string) => placement.placedElsewhere(appId, chatId) } : {}),
    },
  );
  // In a cluster: the node-to-node connections (calls out) and listener (calls in, opened by listen()).
  // The cluster key follows the signing keys: a node proves with the signing key's and accepts any
  // unretired key's. A rotated key is loaded by every node before it signs (its activeFrom), so
  // nodes switching to it at slightly different moments still accept each other.
  const secrets = new Map<string, Buffer>();
  const secretOf = (key: { kid: string; privateKeyPem: string }) => secrets.get(key.kid) ?? secrets.set(key.kid, clusterSecret(key.privateKeyPem)).get(key.kid)!;
  const secret = () => signingKeys.live().map(secretOf);
  const rpcLog = log.child({ component: 'rpc' });
  const rpcClient = cluster && new RpcClient({ nodeId: cluster.nodeId, secret, log: rpcLog });
  const appActions = new AppActionBudget(config.APP_ACTIONS_PER_SECOND);
  // Load shedding at the edge: a node that cannot keep up refuses part of the new sends at once,
  // before any work is done for them, so what it takes keeps bounded latency (common/limits);
  // an application with little in flight is not shed for another's load.
  const shedder = new LoadShedder();
  const chats = new ChatService({
    store,
    actors,
    now,
    // In a cluster each chat's operations run on its owner, forwarded there node to node.
    ...(cluster && placement && rpcClient ? { router: (local: LocalChatOps) => new ClusterRouter(placement, { failoverMs: cluster.failoverMs, rpc: rpcClient, local: (op, args) => runHere(local, op, args) }) } : {}),
    deliverReplay: replays.deliver,
    limits: new UserWriteLimits({ write: config.USER_WRITES_PER_SECOND, typing: config.USER_TYPING_PER_SECOND }, appActions),
    admission: new SendAdmission({ appActions, userSends: new WindowLimiter(config.USER_SENDS_PER_SECOND, 1000), userSendsPerSecond: config.USER_SENDS_PER_SECOND, shedder, onShed: () => m.shed() }),
    chatCap,
    ...(webhooks ? { webhooks } : {}),
    ...(blocks ? { blocks } : {}),
    ...(blocklists ? { blocklists } : {}),
    ...(beforeSend ? { beforeSend } : {}),
  });
  let stopControl = () => {};
  const rpcHandlers: Record<string, RpcHandler> = Object.fromEntries(CHAT_OPS.map((op) => [op, (_appId: string, _chatId: string, args: unknown[]) => runHere(chats.local, op, args as never)]));
  let rpcServer: RpcServer | undefined;
  if (cluster && placement && rpcClient) {
    placement.onChange(() => {
      const dropped = actors!.dropUnowned((appId, chatId) => placement.owns(appId, chatId));
      log.info({ nodes: placement.nodes().map((n) => n.nodeId), droppedActors: dropped }, 'cluster membership changed');
    });
    stopControl = cluster.bus.subscribe({ kind: 'control' }, (payload) => {
      const message = decodeControl(payload);
      if (!message) return; // another version's, or not one (decodeControl)
      // Exhaustive: a control message added to ControlMessage without a case here does not compile.
      switch (message.type) {
        case 'apiKey.revoked':
          return apiKeys.invalidate(message.appId, message.keyId);
        case 'app.deleted':
          return appDeleted(message.appId);
        case 'webhooks.changed':
          return webhooksChanged(message.appId);
        case 'user.banned':
          return banAnnounced(message.appId, message.userId);
        case 'user.unbanned':
          return bans.changed(message.appId, message.userId);
        case 'user.blocks.changed':
          return blocks.changed(message.appId, message.userId, message.otherId);
        case 'blocklist.changed':
          return blocklists.changed(message.appId);
        case 'attachmentSettings.changed':
          return attachments?.rules.changed(message.appId);
        case 'pushSettings.changed':
          return pushSettings.changed(message.appId);
        case 'upload.released':
          return attachments?.uploadReleased(message.uploadId);
        case 'node.leaving':
          return void cluster.membership.refresh();
        default:
          return message satisfies never;
      }
    });
  }
  const requests = new WindowLimiter(config.USER_REQUESTS_PER_SECOND, 1000);
  const authenticateUser = (request: RequestInfo) => {
    const p = tokens.authenticate(request);
    if (p instanceof ApiError) return p;
    const d = requests.hit(`${p.appId}/${p.userId}`);
    if (!d.allowed) return new ApiError('RATE_LIMITED', `at most ${config.USER_REQUESTS_PER_SECOND} requests per second per user`, { retryAfterSeconds: d.retryAfterSeconds });
    // The application must still exist, and the user not be banned: each known at once while its
    // status is fresh, else one lookup.
    const banned = () => {
      const refused = bans.refusal(p.appId, p.userId);
      return refused instanceof Promise ? refused.then((r) => r ?? p) : (refused ?? p);
    };
    const live = sessions.appLive(p.appId);
    if (live === true) return banned();
    if (live === false) return appGone();
    return live.then((ok) => (ok ? banned() : appGone()));
  };
  const moderated = (appId: string, userId: string, banned: boolean) => {
    bans.changed(appId, userId);
    if (banned) closeSockets(appId, userId, 'USER_BANNED');
    cluster?.bus.publish({ kind: 'control' }, encodeControl({ type: banned ? 'user.banned' : 'user.unbanned', appId, userId }));
  };
  // Every node reads the list again at once; the change is a webhook event before it is answered.
  const blocklistAdmin = new NodeBlocklistAdmin(store, async (appId, event) => {
    blocklists.changed(appId);
    cluster?.bus.publish({ kind: 'control' }, encodeControl({ type: 'blocklist.changed', appId }));
    await webhooks?.emit(appId, [{ type: 'blocklist.updated', data: event }]);
  }, now);
  const blocksChanged = (appId: string, userId: string, otherId: string) => {
    blocks.changed(appId, userId, otherId);
    cluster?.bus.publish({ kind: 'control' }, encodeControl({ type: 'user.blocks.changed', appId, userId, otherId }));
  };
  const disconnectUser = (appId: string, userId: string) => {
    closeSockets(appId, userId);
    clusterEvents?.userGone(appId, userId);
  };
  // Expired sign-ins are forgotten hourly (stores with TTLs expire them themselves).
  const sweepSessions = () => void store.userSessions.sweepExpired(now().toISOString()).catch((error: unknown) => log.warn({ err: String(error) }, 'cannot sweep expired sign-ins'));
  const sessionSweep = setInterval(sweepSessions, 3_600_000);
  sessionSweep.unref();
  const keyRequests = new WindowLimiter(config.API_KEY_REQUESTS_PER_SECOND, 1000);
  // Every API-key route goes through here (usage keeps each key's last use).
  const verifyApiKey = async (request: RequestInfo) => {
    const p = await apiKeys.authenticate(request);
    if (!(p instanceof ApiError)) usage.keyUsed(p.appId, p.keyId);
    return p;
  };
  const authenticateApiKey = async (request: RequestInfo) => {
    const p = await verifyApiKey(request);
    if (p instanceof ApiError) return p;
    const d = keyRequests.hit(`${p.appId}/${p.keyId}`);
    return d.allowed ? p : new ApiError('RATE_LIMITED', `at most ${config.API_KEY_REQUESTS_PER_SECOND} requests per second per API key`, { retryAfterSeconds: d.retryAfterSeconds });
  };
  const refreshes = new WindowLimiter(config.REFRESH_PER_ADDRESS_PER_MINUTE, 60_000);
  const admitRefresh = (address: string) => {
    const d = refreshes.hit(address);
    return d.allowed ? undefined : new ApiError('RATE_LIMITED', `at most ${config.REFRESH_PER_ADDRESS_PER_MINUTE} refreshes per minute from one address`, { retryAfterSeconds: d.retryAfterSeconds });
  };
  const ctx: NodeContext = { config, store, tokens, apiKeys, authenticateApiKey, admitRefresh, chats, sessions, log, authenticateUser, disconnectUser, bans, moderated, blocksChanged, blocklists: blocklistAdmin, usage, push: pushSettings, ...(webhooks ? { webhooks } : {}), ...(attachments ? { attachments } : {}), now };

  let closing = false;
  // The WebSocket route is registered before the catch-all HTTP route.
  const gateway = attachGateway({
    app,
    hub,
    tokens,
    chats,
    store,
    replays,
    events,
    ...(webhooks ? { webhooks } : {}),
    ...(cluster ? { presence: cluster.presence } : {}),
    ...(options.appStatus.tier
      ? {
          admission: new Admission({
            tierOf: (appId) => options.appStatus.tier!(appId),
            usersOnline: cluster ? (appId) => cluster.presence.usersOnline(appId) : (appId) => hub.appUsers(appId),
            demoCeiling: config.DEMO_MAX_CONCURRENT_USERS,
            ttlMs: config.KEY_STATUS_TTL_MS,
          }),
        }
      : {}),
    log,
    metrics: m,
    usage,
    sessions,
    actionsPerSecond: config.WS_ACTIONS_PER_SECOND,
    appBudgetSpent: (appId: string) => appActions.spent(appId),
  });
  const routes: AnyRoute[] = [
    ...userRoutes(ctx),
    ...chatRoutes(ctx),
    ...pinRoutes(ctx),
    ...threadRoutes(ctx),
    ...searchRoutes(ctx),
    ...moderationRoutes(ctx),
    ...flagRoutes(ctx),
    ...chatModerationRoutes(ctx),
    ...blockRoutes(ctx),
    ...messageRoutes(ctx),
    ...attachmentRoutes(ctx),
    ...pushRoutes(ctx),
    defineRoute({
      method: 'GET',
      path: '/api/server/whoami',
      operationId: 'whoAmI',
      summary: 'Check an API key: which application and key it is',
      tags: ['users (server, API key)'],
      auth: { verify: verifyApiKey, security: 'apiKey' },
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
          description: 'Chat users, chats and messages. Realtime: see the WebSocket protocol document. Errors are application/problem+json with a stable `code`.',
          serverUrl: options.publicUrl,
          securitySchemes: {
            apiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'API key (server side only): Authorization: Bearer <apiKey>.' },
            userJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'User JWT from sign-in or refresh: Authorization: Bearer <jwt>.' },
          },
        }),
    }),
  ];
  // The embedded object store's signed URLs, before the JSON routes' catch-all.
  if (options.files instanceof LocalObjectStore) serveLocalFiles(app, options.files, { origins: parseOrigins(config.CORS_ORIGINS) });
  const http = attachRoutes(app, {
    routes,
    maxBodyBytes: config.MAX_BODY_BYTES,
    cors: { origins: parseOrigins(config.CORS_ORIGINS) },
    trustedProxyHops: config.TRUST_PROXY ? config.TRUSTED_PROXY_HOPS : 0,
    log,
    observe: metrics.observeHttp,
  });
  let listening: Listening | undefined;
  return {
    routes,
    invalidateKey: (appId, keyId) => apiKeys.invalidate(appId, keyId),
    appDeleted,
    webhooksChanged,
    attachmentSettingsChanged: (appId: string) => attachments?.rules.changed(appId),
    pushSettingsChanged: (appId: string) => pushSettings.changed(appId),
    blocklists: blocklistAdmin,
    listen: async (host, port) => {
      let rpc: string | undefined;
      if (cluster) {
        // Before anything is served: the store names this node, and where to reach it, to a node
        // that finds a chat this one holds (FencedError.holder), so it can forward there.
        rpcServer = await RpcServer.listen(host, config.NODE_RPC_PORT, { nodeId: cluster.nodeId, secret, handlers: rpcHandlers, log: rpcLog });
        rpc = rpcAddress(config.NODE_RPC_ADDRESS, host, rpcServer.port);
        store.writers.announce({ id: cluster.nodeId, address: rpc });
      }
      listening = await listen(app, host, port);
      if (cluster && rpcServer && rpc) {
        const url = publicUrl('', host, listening.port);
        log.info({ rpc, rpcPort: rpcServer.port }, `node-to-node listener on port ${rpcServer.port}, announced as ${rpc}`);
        // A failed first beat is retried by the heartbeat: the node joins once Redis answers.
        await cluster.membership.join(cluster.nodeId, { url, rpc, version: NODE_VERSION }).catch((error: unknown) => log.warn({ err: String(error) }, 'cannot join the cluster yet; retrying'));
      }
      return listening;
    },
    close: async () => {
      closing = true;
      stopWatchingKeys();
      if (cluster) {
        // Leave first, so the other nodes take this node's chats while it drains.
        await cluster.membership.leave();
        cluster.bus.publish({ kind: 'control' }, encodeControl({ type: 'node.leaving', nodeId: cluster.nodeId }));
      }
      listening?.close();
      // Calls other nodes forwarded here before they saw this node leave finish; later ones are
      // refused unrun (`leaving`), and their callers send them to the chat's new owner.
      await Promise.all([http.drained(5_000), rpcServer?.close(5_000)]);
      await actors.flushAll();
      gateway.closeAll('SHUTDOWN');
      actors.close();
      // After the last writes and closes, so their counts are in the final flush.
      await usage.close();
      push?.delivery.close();
      fileDeletions?.close();
      await webhooks?.close();
      await push?.close();
      beforeSend?.close();
      await attachments?.sweeper.stop();
      shedder.close();
      clearInterval(sessionSweep);
      stopControl();
      placement?.close();
      await rpcClient?.close();
      closeApp(app);
    },
  };
}

export const nodeStorePath = (dataDir: string) => join(dataDir, 'node');
