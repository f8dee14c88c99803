import uws, { type HttpResponse, type TemplatedApp, type WebSocket } from 'uWebSockets.js';
import { unpack } from 'msgpackr';
import { ApiError, bearerToken, compileValidator, isApiError, problemReply, toClientError, type Logger, type Validator } from '../../common/index.ts';
import type { Presence } from '../bus/index.ts';
import { customDataProblem, sendInputOf, type ChatService, type ChatWebhooks, type EditInput, type EventSink, type Principal } from '../chat/index.ts';
import type { NodeStore } from '../store/index.ts';
import type { SessionGuard } from '../auth/session-guard.ts';
import type { UserTokens } from '../auth/user-tokens.ts';
import { actionSchemas, closeCodes, isActionType, type Action, type CloseName } from './protocol.ts';
import type { RealtimeHub } from './hub.ts';
import type { Encoding } from './frames.ts';
import { REALTIME_LIMITS } from './limits.ts';
import type { Replays } from './replays.ts';
import { parseOpenThreads, parseResume, resume } from './resume.ts';
import { openThread } from './open-threads.ts';
import type { Admission } from './admission.ts';
import { HintCooldowns, ignoresHint, jitteredHint, tokenKey, toldToWait } from './ignored-hints.ts';
import { connectionId, nextConnection } from './connection-id.ts';
import { senderOf, socketState, takeToken, type SocketState } from './socket-state.ts';
import { NO_CHANGE, presenceChanged } from './presence-change.ts';

export interface GatewayMetrics {
  connections: (delta: number) => void;
  actionIn: (type: string) => void;
  slowConsumerDropped: () => void;
}

export interface GatewayDeps {
  app: TemplatedApp;
  hub: RealtimeHub;
  tokens: UserTokens;
  chats: ChatService;
  store: NodeStore;
  replays: Replays;
  /** Where user events go: the hub standalone, the hub and the bus in a cluster. */
  events: EventSink;
  /** Webhook events (`user.online`, `user.offline`); none when absent. */
  webhooks?: ChatWebhooks;
  /**
   * In a cluster: users online on any node (a user is online while one of its sockets is, on any
   * node). Standalone the hub's own count is exact.
   */
  presence?: Presence;
  log: Logger;
  metrics: GatewayMetrics;
  /** Token bucket per connection: sustained actions per second (bursts of twice that). */
  actionsPerSecond: number;
  /** The application's action budget on this node, when it is spent (see AppActionBudget): refused before any other work. */
  appBudgetSpent?: (appId: string) => ApiError | undefined;
  /** Whether a socket's application and user still exist (checked on open and before each action). */
  sessions: SessionGuard;
  /** The tier's ceiling of concurrent users, checked before a socket counts as connected. */
  admission?: Admission;
  /** Told when a counted socket opens or closes (usage samples the application's concurrent users). */
  usage?: { connectionsChanged(appId: string): void };
}

export type { SocketState } from './socket-state.ts';

/** Answers an upgrade with the HTTP problem response of `error`: no socket. */
function refuse(res: HttpResponse, error: ApiError): void {
  const reply = problemReply(error);
  res.writeStatus(`${reply.status}`);
  for (const [k, v] of Object.entries(reply.headers ?? {})) res.writeHeader(k, v);
  res.end(JSON.stringify(reply.body));
}

/** The subprotocol list a client asked for (`Sec-WebSocket-Protocol`), none when the header is absent. */
const subprotocols = (header: string): string[] => (header === '' ? [] : header.split(',').map((p) => p.trim()).filter(Boolean));

const cooldownError = (seconds: number) =>
  new ApiError('RATE_LIMITED', 'a connection of this user was closed for sending while told to wait; reconnect after Retry-After', { retryAfterSeconds: seconds });

/**
 * What the client of an action that threw is told, as the HTTP layer tells it (toClientError):
 * UNAVAILABLE while a backend is down or overloaded, which is worth retrying (a send with the same
 * idempotency key then cannot be stored twice); INTERNAL for anything else, a bug a retry only repeats.
 */
function actionFailure(error: unknown): ApiError {
  const reply = toClientError(error);
  return reply.code === 'UNAVAILABLE' ? new ApiError('UNAVAILABLE', `${reply.detail}; a send retried with the same idempotency key is stored once`, reply.extra) : reply;
}

const validators = new Map<string, Validator>(Object.entries(actionSchemas).map(([type, schema]) => [type, compileValidator(schema, 'frame')]));

/**
 * The WebSocket endpoint, `GET /ws`. The user JWT (query `token`, or `Authorization: Bearer`) is
 * checked before the upgrade; a bad one gets an HTTP problem response, never a socket.
 */
export function attachGateway(deps: GatewayDeps): { closeAll(name: CloseName): void } {
  const { app, hub, log } = deps;
  /**
   * Open sockets not counted in the hub yet: their admission check is pending (or refused them and
   * they are closing). Every other open socket is in the hub, which holds this gateway's sockets
   * only: the two together are every socket, with no set of them all (about 35 bytes a socket).
   */
  const pending = new Set<WebSocket<SocketState>>();
  const counted = () => hub.all() as IterableIterator<WebSocket<SocketState>>;
  const cooldowns = new HintCooldowns();

  /** The socket counts as connected: in the hub, in presence; `ready` once its chats are subscribed. */
  function opened(ws: WebSocket<SocketState>, waitPresence: boolean): void {
    const c = ws.getUserData();
    c.admitted = true;
    pending.delete(ws);
    const count = hub.add(ws);
    const early = c.early;
    c.early = undefined;
    for (const frame of early ?? []) onMessage(ws, frame.data, frame.isBinary);
    // `ready` follows once the socket is subscribed to the user's chats. In a cluster it also
    // waits until this node hears those chats from the other nodes, so nothing published after
    // `ready` is missed (a down bus does not hold the socket back).
    // A token outlives a deletion of its application or user: such a socket is closed at once.
    const online = presenceChanged(deps, c, 'presence.online', deps.presence ? () => deps.presence!.online(c.appId, c.userId, deps.replays.nodeId, connectionId(c.connId)) : count === 1);
    usageAfter(online, c.appId);
    Promise.all([deps.store.chats.chatsOf(c.appId, c.userId), deps.sessions.ended(c.appId, c.userId), waitPresence ? online : undefined]).then(
      ([chatIds, ended]) => {
        if (c.closed) return;
        if (ended) {
          const { code, reason, reconnect } = closeCodes[ended === 'app-deleted' ? 'APP_DELETED' : ended === 'user-banned' ? 'USER_BANNED' : 'USER_DELETED'];
          return hub.end(ws, code, JSON.stringify({ reason, reconnect }));
        }
        for (const chatId of chatIds) if (!c.resume?.has(chatId)) hub.subscribe(ws, chatId);
        if (deps.presence) void deps.replays.ready().then(() => ready(ws), () => ready(ws));
        else ready(ws);
      },
      (error: unknown) => {
        log.warn({ err: String(error) }, 'cannot load the chats of a new socket');
        const { code, reason, reconnect } = closeCodes.UNAVAILABLE;
        if (!c.closed) hub.end(ws, code, JSON.stringify({ reason, reconnect }));
      },
    );
  }

  /** Subscribes the socket to its topics and sends `ready`: events flow from here on, `ready` before any of them. */
  function ready(ws: WebSocket<SocketState>): void {
    const c = ws.getUserData();
    if (c.closed) return;
    hub.join(ws);
    hub.send(ws, { type: 'ready', connectionId: connectionId(c.connId), userId: c.userId });
    const from = c.resume;
    c.resume = undefined; // the replay holds it from here on
    if (from) void resume(deps, ws, from).catch((error: unknown) => log.warn({ err: String(error) }, 'resume failed'));
  }

  /** Usage is told that the application's connections changed once presence has the change. */
  function usageAfter(change: Promise<void>, appId: string): void {
    if (!deps.usage) return;
    if (change === NO_CHANGE) deps.usage.connectionsChanged(appId);
    else void change.finally(() => deps.usage!.connectionsChanged(appId));
  }

  /** One frame of a socket that counts as connected (see `opened`). */
  function onMessage(ws: WebSocket<SocketState>, data: ArrayBuffer, isBinary: boolean): void {
    const c = ws.getUserData();
    if (c.closed) return;
    const now = Date.now();
    const sender = senderOf(c, deps.actionsPerSecond, now);
    if (ignoresHint(sender, now)) {
      const seconds = cooldowns.start(`${c.appId}:${c.userId}`, c.tokenKey, now);
      const { code, reason, reconnect } = closeCodes.IGNORED_RETRY_HINTS;
      c.closed = true; // no answer to what is still buffered: the socket is going
      hub.end(ws, code, JSON.stringify({ reason, reconnect, retryAfter: Math.ceil(seconds) }));
      return;
    }
    if (data.byteLength > REALTIME_LIMITS.maxFrameBytes) {
      return hub.send(ws, { type: 'error', code: 'FRAME_TOO_LARGE', message: `frames are at most ${REALTIME_LIMITS.maxFrameBytes} bytes` });
    }
    let frame: unknown;
    try {
      frame = isBinary ? unpack(Buffer.from(data)) : JSON.parse(Buffer.from(data).toString('utf8'));
    } catch {
      return hub.send(ws, { type: 'error', code: 'MALFORMED_FRAME', message: 'frame is not valid JSON or MessagePack' });
    }
    // The client's id is echoed only when it is one it could have sent: 1–64 characters.
    const rawId = frame && typeof frame === 'object' ? (frame as { id?: unknown }).id : undefined;
    const id = typeof rawId === 'string' && rawId.length >= 1 && rawId.length <= 64 ? rawId : undefined;
    const fail = (error: ApiError, hint?: number) => {
      const retryAfter = hint ?? (error.extra.retryAfterSeconds === undefined ? undefined : Math.max(1, Math.ceil(error.extra.retryAfterSeconds)));
      hub.send(ws, { type: 'error', ...(id !== undefined ? { id } : {}), code: error.code, message: error.detail, ...(retryAfter === undefined ? {} : { retryAfter }) });
    };
    // The connection-wide limits: a refusal tells the connection to wait (see ignored-hints.ts),
    // for a jittered time, so that the many sockets one budget refused together come back spread.
    const waitFor = (error: ApiError) => {
      const hint = jitteredHint(error.extra.retryAfterSeconds ?? 0);
      toldToWait(sender, now, hint);
      fail(error, hint);
    };
    if (!takeToken(sender, deps.actionsPerSecond, now)) return waitFor(new ApiError('RATE_LIMITED', `at most ${deps.actionsPerSecond} actions per second per connection`, { retryAfterSeconds: (1 - sender.tokens) / deps.actionsPerSecond }));
    // A tenant over its budget is refused here, before validation and dispatch: refusing its
    // flood must cost the node as little as possible (the action is counted where it is taken).
    const spent = deps.appBudgetSpent?.(c.appId);
    if (spent) return waitFor(spent);
    const type = frame && typeof frame === 'object' ? (frame as { type?: unknown }).type : undefined;
    if (!isActionType(type)) return fail(new ApiError('UNKNOWN_ACTION', `unknown action type ${JSON.stringify(type)?.slice(0, 40)}`));
    const checked = validators.get(type)!(frame);
    if (isApiError(checked)) return fail(checked);
    const action = checked.value as Action;
    deps.metrics.actionIn(action.type);
    const run = (appLive: boolean) => {
      if (!appLive) {
        const { code, reason, reconnect } = closeCodes.APP_DELETED;
        if (!c.closed) hub.end(ws, code, JSON.stringify({ reason, reconnect }));
        return;
      }
      dispatch(deps, ws, action).then(
        (result) => (isApiError(result) ? fail(result) : hub.ack(ws, action.id, result)),
        (error: unknown) => {
          const reply = actionFailure(error);
          if (reply.code === 'UNAVAILABLE') log.warn({ err: (error as Error).message, action: action.type }, 'backend unavailable');
          else log.error({ err: error instanceof Error ? error.stack : String(error), action: action.type }, 'action failed');
          fail(reply);
        },
      );
    };
    // The application must still exist: at once while its status is fresh, else one lookup.
    const live = deps.sessions.appLive(c.appId);
    if (typeof live === 'boolean') run(live);
    else
      live.then(run, (error: unknown) => fail(actionFailure(error)));
  }

  app.ws<SocketState>('/ws', {
    maxPayloadLength: REALTIME_LIMITS.hardFrameBytes,
    maxBackpressure: REALTIME_LIMITS.maxBackpressureBytes,
    closeOnBackpressureLimit: 1,
    idleTimeout: REALTIME_LIMITS.idleTimeoutSeconds,
    sendPingsAutomatically: true,
    compression: uws.DISABLED,

    upgrade: (res, req, context) => {
      const key = req.getHeader('sec-websocket-key');
      const protocols = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      const query = new URLSearchParams(req.getQuery() ?? '');
      const token = query.get('token') ?? bearerToken(req.getHeader('authorization'));
      if (!token) return refuse(res, new ApiError('AUTH_REQUIRED', 'connect with ?token=<user JWT>'));
      const hashed = tokenKey(token);
      const tokenCooling = cooldowns.remainingForToken(hashed, Date.now());
      if (tokenCooling > 0) return refuse(res, cooldownError(tokenCooling));
      const principal = deps.tokens.verify(token);
      if (isApiError(principal)) return refuse(res, principal);
      const cooling = cooldowns.remaining(`${principal.appId}:${principal.userId}`, Date.now());
      if (cooling > 0) return refuse(res, cooldownError(cooling));
      const siblings = hub.sockets(principal.appId, principal.userId) as ReadonlySet<WebSocket<SocketState>>;
      if (siblings.size >= REALTIME_LIMITS.connectionsPerUser) {
        return refuse(res, new ApiError('TOO_MANY_CONNECTIONS', `at most ${REALTIME_LIMITS.connectionsPerUser} connections per user`));
      }
      const requested = subprotocols(protocols);
      const encoding: Encoding = requested.includes('msgpack') ? 'msgpack' : 'json';
      const chosen = requested.length === 0 ? '' : encoding;
      const resumeFrom = parseResume(query.get('resume'));
      if (isApiError(resumeFrom)) return refuse(res, resumeFrom);
      const badThreads = parseOpenThreads(query.get('threads'), resumeFrom);
      if (badThreads) return refuse(res, badThreads);
      // The hub holds this gateway's sockets only, open ones only (each leaves it as it closes).
      const sibling = siblings.values().next().value?.getUserData();
      const state = socketState(principal, { connId: nextConnection(), encoding, tokenKey: hashed, resume: resumeFrom }, sibling);
      // Upgraded here, synchronously, with the chats loaded after `open`. An upgrade completed
      // after an await must be corked, and uWS's cork() around such an upgrade can read the new
      // socket's memory as HTTP state and close it at once (1006, nothing logged; seen on about 1
      // in 100 sockets when the chats come from Cassandra: uNetworking/uWebSockets#1928, fixed
      // upstream by #1929, not in the uWS build we use).
      res.upgrade(state, key, chosen, extensions, context);
    },

    open: (ws) => {
      const c = ws.getUserData();
      deps.metrics.connections(1);
      if (!deps.admission) return opened(ws, false);
      pending.add(ws);
      // Checked before the socket counts anywhere; `ready` then waits for presence to count it, so
      // the next user's check (on any node) sees this one.
      deps.admission.admit(c.appId, c.userId).then(
        (retryAfter) => {
          if (c.closed) return;
          if (retryAfter === undefined) return opened(ws, true);
          const { code, reason, reconnect } = closeCodes.USER_CEILING_REACHED;
          hub.end(ws, code, JSON.stringify({ reason, reconnect, retryAfter }));
        },
        (error: unknown) => {
          log.warn({ err: String(error) }, 'cannot check the concurrent-user ceiling of a new socket');
          const { code, reason, reconnect } = closeCodes.UNAVAILABLE;
          if (!c.closed) hub.end(ws, code, JSON.stringify({ reason, reconnect }));
        },
      );
    },

    message: (ws, data, isBinary) => {
      const c = ws.getUserData();
      if (c.admitted) return onMessage(ws, data, isBinary);
      // Sent before the admission check answered: kept (a copy: uWS reuses the buffer) and taken
      // once the socket counts as connected, or dropped with it if refused.
      const early = (c.early ??= []);
      const held = early.reduce((n, f) => n + f.data.byteLength, 0);
      if (early.length < REALTIME_LIMITS.earlyFrames && held + data.byteLength <= REALTIME_LIMITS.earlyBytes) early.push({ data: data.slice(0), isBinary });
      else hub.end(ws, closeCodes.UNAVAILABLE.code, JSON.stringify({ reason: 'too much sent before ready', reconnect: closeCodes.UNAVAILABLE.reconnect }));
    },

    close: (ws, code) => {
      const c = ws.getUserData();
      // The connection's id is made only when the line is written (a socket closing is frequent).
      if (log.isLevelEnabled('debug')) log.debug({ code, connId: connectionId(c.connId), slow: c.slow }, 'socket closed');
      c.closed = true;
      pending.delete(ws);
      deps.metrics.connections(-1);
      if (c.slow) deps.metrics.slowConsumerDropped();
      if (!c.admitted) return; // refused before it counted anywhere
      const left = hub.remove(ws);
      usageAfter(presenceChanged(deps, c, 'presence.offline', deps.presence ? () => deps.presence!.offline(c.appId, c.userId, deps.replays.nodeId, connectionId(c.connId)) : left === 0), c.appId);
    },

  });

  const slowCheck = setInterval(() => hub.dropSlowConsumers(), REALTIME_LIMITS.slowConsumerCheckMs);
  slowCheck.unref();
  const expiryCheck = setInterval(() => {
    const now = Date.now();
    const { code, reason, reconnect } = closeCodes.TOKEN_EXPIRED;
    for (const sockets of [counted(), pending]) for (const ws of sockets) if (ws.getUserData().expiresAt * 1000 <= now) hub.end(ws, code, JSON.stringify({ reason, reconnect }));
  }, REALTIME_LIMITS.expiryCheckMs);
  expiryCheck.unref();

  return {
    closeAll: (name) => {
      clearInterval(slowCheck);
      clearInterval(expiryCheck);
      cooldowns.close();
      const { code, reason, reconnect } = closeCodes[name];
      for (const ws of [...counted(), ...pending]) hub.end(ws, code, JSON.stringify({ reason, reconnect }));
    },
  };
}

async function dispatch(deps: GatewayDeps, ws: WebSocket<SocketState>, action: Action): Promise<object | ApiError> {
  const c = ws.getUserData();
  const p: Principal = { appId: c.appId, userId: c.userId };
  const { chats } = deps;
  switch (action.type) {
    case 'message.send': {
      const input = sendInputOf(action, '');
      if (isApiError(input)) return input;
      // Admitted by the chat service, as a REST send is (chat/send-admission.ts).
      const r = await deps.chats.send(p, action.chatId, input);
      return isApiError(r) ? r : { message: r.message, created: r.created };
    }
    case 'message.edit': {
      const problem = customDataProblem(action.data, '/data');
      if (problem) return problem;
      if (action.content === undefined && action.data === undefined) return ApiError.field('VALIDATION_FAILED', '/content', 'required unless data is given: an edit changes content, data or both');
      const change: EditInput = {};
      if (action.content !== undefined) change.content = action.content;
      if (action.data !== undefined) change.data = action.data;
      const r = await chats.edit(p, action.chatId, action.messageId, change);
      return isApiError(r) ? r : { message: r };
    }
    case 'message.delete': {
      const r = await chats.deleteMessage(p, action.chatId, action.messageId);
      return isApiError(r) ? r : { message: r };
    }
    case 'reaction.add':
    case 'reaction.remove': {
      const r = await chats.react(p, action.chatId, action.messageId, action.reaction, action.type === 'reaction.add');
      return isApiError(r) ? r : { message: r };
    }
    case 'pin.add':
    case 'pin.remove': {
      const r = await chats.pin(p, action.chatId, action.messageId, action.type === 'pin.add');
      return isApiError(r) ? r : r ? { pin: r } : {};
    }
    case 'thread.open':
      return openThread(deps, ws, action.chatId, action.parentId);
    case 'thread.close':
      deps.hub.closeThread(ws, action.chatId, action.parentId);
      return {};
    case 'read.mark': {
      const r = await chats.markRead(p, action.chatId, action.seq);
      return isApiError(r) ? r : { readSeq: r };
    }
    case 'typing.start':
    case 'typing.stop': {
      const r = await chats.typing(p, action.chatId, action.type === 'typing.start');
      return r ?? {};
    }
    case 'presence.query': {
      // Up to 100 lookups: counted in the user's write budget, so what one user costs is bounded.
      const refused = chats.limits?.admit('presence', p);
      if (refused) return refused;
      // Online anywhere: the cluster's presence, or this node's connections standalone.
      const { presence } = deps;
      if (presence) return { online: (await Promise.all(action.userIds.map(async (id) => ((await presence.isOnline(c.appId, id)) ? [id] : [])))).flat() };
      const here = deps.hub.appUsers(c.appId);
      return { online: action.userIds.filter((id) => here.has(id)) };
    }
    case 'ping':
      return {};
    default:
      return action satisfies never;
  }
}
