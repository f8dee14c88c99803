import { pack, unpack } from 'msgpackr';
import type { AuthManager } from './auth.ts';
import { ChatApiError, ChatNetworkError, ChatStateError, ChatTimeoutError } from './errors.ts';
import { retryAfterMsOf } from './retry-after.ts';
import { closeAction } from './codes.ts';
import { OpenThreads } from './open-threads.ts';
import type { ChatEvent, Message, ServerEvent, ServerEventType, EventOf } from './types.ts';

export type ConnectionStatus = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';

/** When to try again after the `attempt`-th failed connection (0-based), in milliseconds. */
export interface ReconnectPolicy {
  delay(attempt: number): number;
}

/** Exponential backoff from 250 ms to 10 s with ±50% jitter, so a restarted node is not stampeded. */
/** The `retryAfter` (seconds) of a close reason (`{"reason", "reconnect", "retryAfter"}`), in ms. */
function retryAfterMs(reason: string): number | undefined {
  try {
    const seconds = (JSON.parse(reason) as { retryAfter?: unknown }).retryAfter;
    return typeof seconds === 'number' && seconds > 0 && seconds <= 3600 ? seconds * 1000 : undefined;
  } catch {
    return undefined;
  }
}

export const exponentialBackoff = (initialMs = 250, maxMs = 10_000, jitter = 0.5): ReconnectPolicy => ({
  delay: (attempt) => {
    const base = Math.min(maxMs, initialMs * 2 ** attempt);
    return Math.round(base * (1 - jitter + Math.random() * 2 * jitter));
  },
});

/** The part of the WebSocket API the client uses: the browser's, or `ws` in Node. */
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: string | ArrayBufferLike | Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

export interface RealtimeOptions {
  baseUrl: string;
  auth: AuthManager;
  WebSocket: WebSocketConstructor | undefined;
  encoding: 'json' | 'msgpack';
  actionTimeoutMs: number;
  reconnect: ReconnectPolicy;
  /** Messages of a chat with seq in [fromSeq, toSeq], oldest first, for repairing gaps. */
  history: (chatId: string, fromSeq: number, toSeq: number) => Promise<Message[]>;
}

type Action = Record<string, unknown> & { type: string };

/** The server's largest accepted frame (PROTOCOL.md). */
const MAX_FRAME_BYTES = 64 * 1024;
const byteLength = (data: string | Uint8Array): number =>
  typeof data !== 'string' ? data.byteLength : data.length * 3 <= MAX_FRAME_BYTES ? data.length : new TextEncoder().encode(data).byteLength;
interface PendingAction {
  frame: Action & { id: string };
  resolve: (result: Record<string, unknown>) => void;
  reject: (error: unknown) => void;
  timer: ReturnType<typeof setTimeout>;
  sent: boolean;
}

type Handler<E> = (event: E) => void;

/**
 * The realtime connection: typed events, actions settled by their ack or error, reconnection with
 * backoff, and exact resume. It remembers the last seq seen per chat; after a reconnect the server
 * replays what was missed, and when it says the gap is too large the client pages history itself.
 * Events reach handlers once each and, per chat, in seq order. Actions made while offline wait in a
 * queue; sends carry an idempotency key, so re-sending after a reconnect never duplicates a message.
 */
export class Realtime {
  private socket: WebSocketLike | undefined;
  private statusValue: ConnectionStatus = 'idle';
  private readonly handlers = new Map<string, Set<Handler<never>>>();
  private readonly pending = new Map<string, PendingAction>();
  private readonly lastSeq = new Map<string, number>();
  /** The chat's last revision known to be fully seen: from live events and from `resumed`. */
  private readonly lastRev = new Map<string, number>();
  /** Chats being repaired from history; their live events wait here, in arrival order. */
  private readonly repairing = new Map<string, ServerEvent[]>();
  private attempt = 0;
  private nextId = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private wanted = false;
  private firstOpen: { resolve: () => void; reject: (e: unknown) => void } | undefined;
  private opening: Promise<void> | undefined;
  /** Threads open on the connection, opened again with each reconnect. */
  readonly threads = new OpenThreads();
  /** The chats the current connection resumed (its URL named them, with their open threads). */
  private resumed: ReadonlySet<string> = new Set();

  constructor(private readonly options: RealtimeOptions) {}

  get status(): ConnectionStatus {
    return this.statusValue;
  }

  /** The last seq seen per chat (what a reconnect resumes from). */
  seen(chatId: string): number | undefined {
    return this.lastSeq.get(chatId);
  }

  /**
   * Follows a chat the app has read over REST (a chat list, the newest history page) from `seq`,
   * unless it is followed already: a reconnect then resumes it too, so nothing sent to it while
   * the connection was down is missed.
   */
  track(chatId: string, seq: number): void {
    if (!this.lastSeq.has(chatId) && !this.repairing.has(chatId)) this.lastSeq.set(chatId, seq);
  }

  /** Opens the connection; resolves once the server said `ready`. Reconnects by itself after that. */
  connect(): Promise<void> {
    if (this.statusValue === 'open') return Promise.resolve();
    // A second call while connecting shares the first one's outcome.
    if (this.opening && this.firstOpen) return this.opening;
    this.wanted = true;
    const opened = new Promise<void>((resolve, reject) => (this.firstOpen = { resolve, reject }));
    this.opening = opened;
    if (this.statusValue === 'idle' || this.statusValue === 'closed') void this.open('connecting');
    return opened;
  }

  /** Closes for good: pending actions are rejected, no reconnection. */
  close(): void {
    this.wanted = false;
    clearTimeout(this.timer);
    this.socket?.close(1000, 'client closed');
    this.socket = undefined;
    this.setStatus('closed');
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new ChatStateError('the realtime connection was closed'));
    }
    this.pending.clear();
  }

  on<T extends ServerEventType>(type: T, handler: Handler<EventOf<T>>): () => void;
  on(type: '*', handler: Handler<ServerEvent>): () => void;
  on(type: 'status', handler: Handler<ConnectionStatus>): () => void;
  /** Failures the client handled by itself but that the app may want to show (a history repair that failed). */
  on(type: 'error', handler: Handler<Error>): () => void;
  on(type: string, handler: Handler<never>): () => void {
    let set = this.handlers.get(type);
    if (!set) this.handlers.set(type, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  /**
   * Sends an action and resolves with its ack's result (rejects with `ChatApiError` on an error
   * frame, `ChatTimeoutError` after `actionTimeoutMs`). Queued while not connected.
   */
  action<R = Record<string, unknown>>(action: Action): Promise<R> {
    if (this.statusValue === 'closed' && !this.wanted) return Promise.reject(new ChatStateError('connect() first'));
    const frame = { ...action, id: `a${++this.nextId}` };
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(frame.id);
        reject(new ChatTimeoutError(`${action.type} got no answer in ${this.options.actionTimeoutMs} ms; it may still have happened`));
      }, this.options.actionTimeoutMs);
      const entry: PendingAction = { frame, resolve: resolve as (r: Record<string, unknown>) => void, reject, timer, sent: false };
      this.pending.set(frame.id, entry);
      if (this.statusValue === 'open') this.transmit(entry);
    });
  }

  // ---- connection ---------------------------------------------------------------------------------

  private async open(status: 'connecting' | 'reconnecting'): Promise<void> {
    this.setStatus(status);
    const Ctor = this.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!Ctor) {
      this.fail(new ChatStateError('no WebSocket implementation: pass `WebSocket` (e.g. from the ws package) in the options'));
      return;
    }
    let jwt: string;
    try {
      jwt = await this.options.auth.token();
    } catch (error) {
      // Signed out or never signed in: retrying cannot help.
      if ((error instanceof ChatApiError && error.status === 401) || error instanceof ChatStateError) return this.fail(error);
      return this.retry();
    }
    if (!this.wanted) return;
    const url = new URL('ws', this.options.baseUrl.endsWith('/') ? this.options.baseUrl : `${this.options.baseUrl}/`);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    url.searchParams.set('token', jwt);
    const resume = [...this.lastSeq]
      .map(([chatId, seq]) => {
        const rev = this.lastRev.get(chatId);
        return rev === undefined ? `${chatId}:${seq}` : `${chatId}:${seq}:${rev}`;
      })
      .join(',');
    if (resume) url.searchParams.set('resume', resume);
    this.resumed = new Set(this.lastSeq.keys());
    const threads = this.threads.param(this.resumed);
    if (threads) url.searchParams.set('threads', threads);
    const socket = new Ctor(url.toString(), this.options.encoding === 'msgpack' ? ['msgpack'] : []);
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    let opened = false;
    socket.onmessage = (ev) => {
      if (this.socket !== socket) return;
      const frame = this.decode(ev.data);
      if (!frame) return;
      if (frame.type === 'ready') {
        opened = true;
        this.attempt = 0;
        this.setStatus('open');
        this.firstOpen?.resolve();
        this.firstOpen = undefined;
        this.opening = undefined;
        for (const p of this.pending.values()) this.transmit(p);
        // Open threads of chats not resumed: opened again (a failure leaves them closed).
        for (const { chatId, parentId } of this.threads.rest(this.resumed)) this.action({ type: 'thread.open', chatId, parentId }).catch(() => this.threads.delete(chatId, parentId));
        return;
      }
      this.receive(frame);
    };
    socket.onclose = (ev) => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      for (const p of this.pending.values()) p.sent = false;
      if (!this.wanted) return;
      const action = closeAction(ev.code);
      if (action === 'stop') return this.fail(new ChatStateError(`the server ended the session (${ev.code}): ${ev.reason}`));
      // Told when to come back (IGNORED_RETRY_HINTS: sent while told to wait; USER_CEILING_REACHED:
      // the application's ceiling of concurrent users): sooner would only be refused.
      const waitMs = action === 'reconnect' ? retryAfterMs(ev.reason) : undefined;
      if (waitMs !== undefined) return this.retry(waitMs);
      if (action === 'refresh-then-reconnect' || (!opened && this.attempt >= 2)) {
        // Expired, or refused at the upgrade repeatedly: the JWT may be stale. Refresh, then retry.
        void this.options.auth.refresh().then(
          () => this.retry(),
          (error: unknown) => (error instanceof ChatApiError && error.status === 401 ? this.fail(error) : this.retry()),
        );
        return;
      }
      this.retry();
    };
    socket.onerror = () => {
      /* followed by onclose */
    };
  }

  /** Reconnects after the policy's delay, or after `atLeastMs` (plus up to a tenth more) when the server said so. */
  private retry(atLeastMs?: number): void {
    if (!this.wanted) return;
    this.setStatus('reconnecting');
    clearTimeout(this.timer);
    const delay = atLeastMs === undefined ? this.options.reconnect.delay(this.attempt++) : atLeastMs * (1 + Math.random() / 10);
    this.timer = setTimeout(() => void this.open('reconnecting'), delay);
  }

  private fail(error: unknown): void {
    this.wanted = false;
    this.firstOpen?.reject(error);
    this.firstOpen = undefined;
    this.opening = undefined;
    this.close();
  }

  private setStatus(status: ConnectionStatus): void {
    if (this.statusValue === status) return;
    this.statusValue = status;
    this.emit('status', status);
  }

  private transmit(p: PendingAction): void {
    const socket = this.socket;
    if (!socket || p.sent) return;
    const data = this.options.encoding === 'msgpack' ? pack(p.frame) : JSON.stringify(p.frame);
    // The server answers an oversized frame without an id (it cannot read one): refuse it here.
    if (byteLength(data) > MAX_FRAME_BYTES) {
      this.pending.delete(p.frame.id);
      clearTimeout(p.timer);
      const detail = `frames are at most ${MAX_FRAME_BYTES} bytes`;
      p.reject(new ChatApiError({ type: 'websocket', title: 'FRAME_TOO_LARGE', status: 0, detail, code: 'FRAME_TOO_LARGE' }));
      return;
    }
    p.sent = true;
    socket.send(data);
  }

  private decode(data: unknown): (Record<string, unknown> & { type: string }) | undefined {
    try {
      const value = typeof data === 'string' ? JSON.parse(data) : unpack(new Uint8Array(data as ArrayBuffer));
      return value && typeof value === 'object' && typeof value.type === 'string' ? value : undefined;
    } catch {
      return undefined;
    }
  }

  // ---- incoming -----------------------------------------------------------------------------------

  private receive(frame: Record<string, unknown> & { type: string }): void {
    switch (frame.type) {
      case 'ack':
      case 'error': {
        const p = this.pending.get(String(frame.id));
        if (!p) return;
        this.pending.delete(String(frame.id));
        clearTimeout(p.timer);
        if (frame.type === 'ack') p.resolve((frame.result ?? {}) as Record<string, unknown>);
        else p.reject(new ChatApiError({ type: 'websocket', title: String(frame.code), status: 0, detail: String(frame.message), code: String(frame.code) }, { retryAfterMs: retryAfterMsOf(frame.retryAfter) }));
        return;
      }
      case 'resume.gap':
        void this.repair(String(frame.chatId), Number(frame.fromSeq), Number(frame.toSeq));
        return;
      case 'resumed': {
        // Replays advance the revision only once complete: a connection lost mid-replay resumes
        // from the revision before it, so nothing of that replay is skipped.
        const chats = (frame.chats ?? {}) as Record<string, { toRev?: number; stale?: boolean }>;
        for (const [chatId, r] of Object.entries(chats)) {
          if (typeof r.toRev === 'number') this.lastRev.set(chatId, Math.max(this.lastRev.get(chatId) ?? 0, r.toRev));
          if (r.stale) this.deliver({ type: 'chat.stale', chatId });
        }
        return;
      }
      default:
        this.deliver(frame as unknown as ServerEvent);
    }
  }

  /** Hands an event to the handlers, keeping each chat's messages once each and in seq order. */
  private deliver(event: ServerEvent): void {
    const chatId = 'chatId' in event ? event.chatId : undefined;
    if (chatId !== undefined) {
      const waiting = this.repairing.get(chatId);
      if (waiting) {
        waiting.push(event);
        return;
      }
      if (event.type === 'message.new') {
        const last = this.lastSeq.get(chatId);
        if (last !== undefined && event.seq <= last) return; // already delivered
        if (last !== undefined && event.seq > last + 1) {
          this.repairing.set(chatId, [event]);
          void this.repair(chatId, last + 1, event.seq - 1);
          return;
        }
        this.lastSeq.set(chatId, event.seq);
      }
      // A thread's summary, and the chat's copy of a reply shown in the chat, share their revision
      // with the reply's event behind them: that one counts.
      const sharesRev = event.type === 'thread.updated' || (event.type === 'message.new' && event.message.parentId !== undefined);
      if ('rev' in event && !('replay' in event && event.replay) && !sharesRev) this.lastRev.set(chatId, Math.max(this.lastRev.get(chatId) ?? 0, event.rev));
      if (event.type === 'chat.deleted' || (event.type === 'membership.changed' && event.change === 'removed' && event.userId === this.options.auth.userId)) {
        this.lastSeq.delete(chatId);
        this.lastRev.delete(chatId);
      }
    }
    this.emit(event.type, event);
    this.emit('*', event);
  }

  /** Fills seqs [fromSeq, toSeq] of a chat from history, then releases the events that waited. */
  private async repair(chatId: string, fromSeq: number, toSeq: number): Promise<void> {
    if (!this.repairing.has(chatId)) this.repairing.set(chatId, []);
    try {
      const missed = await this.options.history(chatId, fromSeq, toSeq);
      for (const message of missed) {
        const last = this.lastSeq.get(chatId) ?? fromSeq - 1;
        if (message.seq <= last) continue;
        this.lastSeq.set(chatId, message.seq);
        // History carries no revisions; a replay's revision is never used (`resumed` sets it).
        const event: ChatEvent = { type: 'message.new', chatId, seq: message.seq, rev: 0, message, replay: true };
        this.emit(event.type, event);
        this.emit('*', event);
      }
    } catch (error) {
      this.emit('error', new ChatNetworkError(`could not page history of ${chatId}`, { cause: error }));
    }
    // Whatever history could not supply is skipped rather than asked for again and again.
    this.lastSeq.set(chatId, Math.max(this.lastSeq.get(chatId) ?? 0, toSeq));
    const waiting = this.repairing.get(chatId) ?? [];
    this.repairing.delete(chatId);
    for (const event of waiting) this.deliver(event);
  }

  private emit(type: string, value: unknown): void {
    for (const h of this.handlers.get(type) ?? []) {
      try {
        (h as Handler<unknown>)(value);
      } catch {
        // A throwing handler must not stop delivery to the others.
      }
    }
  }
}
