import { AuthManager } from './auth.ts';
import { ChatApiError, ChatStateError } from './errors.ts';
import { ChatModerationCalls } from './chat-moderation.ts';
import { request, type RequestOptions } from './http.ts';
import { exponentialBackoff, Realtime, type ReconnectPolicy, type WebSocketConstructor } from './realtime.ts';
import type { Attachment, AttachmentUrls, ChatBan, ChatSummary, Flag, Member, Message, Mute, Pin, Pinned, Reaction, Role, SearchOptions, SearchPage, User, UserSession } from './types.ts';
import { searchQuery } from './search-query.ts';
import { PushCalls, type PushDevice, type PushTarget } from './push-calls.ts';
import { ThreadCalls } from './thread-calls.ts';
import { UploadCalls, type UploadOptions } from './upload-calls.ts';
import { withRetries } from './upload.ts';

export * from './errors.ts';
export type { UploadOptions } from './upload-calls.ts';
export type { ThreadCalls } from './thread-calls.ts';
export type { PushCalls, PushDevice, PushTarget } from './push-calls.ts';
export { applyReaction } from './reactions.ts';
export { CloseCode, closeAction, isRetryable, RETRYABLE_CODES, type CloseAction, type ErrorCode } from './codes.ts';
export type * from './types.ts';
export { exponentialBackoff, type ConnectionStatus, type ReconnectPolicy, type WebSocketConstructor, type WebSocketLike } from './realtime.ts';

export interface ClientOptions {
  /** The application's `clusterEndpoint`: the only thing a browser needs to know up front. */
  baseUrl: string;
  /** Called with every new token pair after a refresh; persist it (the old refresh token is spent). */
  onTokens?: (session: UserSession) => void;
  /** Called when the sign-in can no longer be refreshed: sign the user in again through your backend. */
  onSignedOut?: (error: unknown) => void;
  /** `msgpack` for binary frames; `json` (default) otherwise. */
  encoding?: 'json' | 'msgpack';
  /** Refresh the JWT this many seconds before it expires (default 60). */
  refreshMarginSeconds?: number;
  /** How long an action waits for its ack or error (default 15 000 ms). */
  actionTimeoutMs?: number;
  reconnect?: ReconnectPolicy;
  /** Defaults to the global `fetch` / `WebSocket`; in Node 20 pass `WebSocket` from the `ws` package. */
  fetch?: typeof fetch;
  WebSocket?: WebSocketConstructor;
}

export interface SendOptions {
  replyTo?: string;
  /** Defaults to a fresh UUID; reuse one to make a retry safe. */
  idempotencyKey?: string;
  /** Ids of attachments from `uploadFile` (1-10); `content` may then be empty. */
  attachments?: string[];
  /** Your application's own data: a JSON object of at most 4 KB encoded, 8 levels deep. */
  data?: Record<string, unknown>;
  /** Members the message is for (1-25): each gets it counted in the chat's `mentionCount` until read. */
  mentions?: string[];
  /** A reply in this message's thread, kept out of the chat's timeline (README, "Threads"). */
  parentId?: string;
  /** With `parentId`: the reply is shown in the chat's timeline too. */
  showInChat?: boolean;
}

/** A v4 UUID; `randomUUID` exists only in secure contexts, `getRandomValues` everywhere. */
const uuid = (): string => {
  if (typeof globalThis.crypto.randomUUID === 'function') return globalThis.crypto.randomUUID();
  const b = globalThis.crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
const enc = encodeURIComponent;
/** A send with files refused while the object store is down (the files' records unreadable): worth sending again. */
const storeDown = (error: unknown) => error instanceof ChatApiError && error.code === 'UNAVAILABLE';

/**
 * The chat client for browsers (and Node): created with the base URL only, given the user's tokens
 * by `setAuth`, it keeps the JWT fresh, calls the REST interface and runs the realtime connection.
 */
/** One chat's read mark on its way, and the one asked for meanwhile (sent after it, once). */
interface ReadMarkState {
  sending: Promise<number>;
  queued?: { seq: number; done: Promise<number> };
}

export class ChatClient {
  private readonly readMarks = new Map<string, ReadMarkState>();
  readonly realtime: Realtime;
  private readonly auth: AuthManager;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.fetchImpl = options.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));
    this.auth = new AuthManager({
      baseUrl: options.baseUrl,
      fetch: this.fetchImpl,
      refreshMarginSeconds: options.refreshMarginSeconds ?? 60,
      ...(options.onTokens ? { onTokens: options.onTokens } : {}),
      ...(options.onSignedOut ? { onSignedOut: options.onSignedOut } : {}),
    });
    this.realtime = new Realtime({
      baseUrl: options.baseUrl,
      auth: this.auth,
      WebSocket: options.WebSocket,
      encoding: options.encoding ?? 'json',
      actionTimeoutMs: options.actionTimeoutMs ?? 15_000,
      reconnect: options.reconnect ?? exponentialBackoff(),
      history: (chatId, fromSeq, toSeq) => this.messagesBetween(chatId, fromSeq, toSeq),
    });
  }

  /** The tokens your backend got from `signIn` (spec §1.4). */
  setAuth(session: UserSession): void {
    this.auth.set(session);
  }

  get userId(): string | undefined {
    return this.auth.userId;
  }

  private call<T>(path: string, init: Omit<RequestOptions, 'token'> = {}): Promise<T> {
    return this.auth.call((jwt) => request<T>(this.options.baseUrl, path, { ...init, token: jwt }, this.fetchImpl));
  }

  private readonly moderation = new ChatModerationCalls((path, init) => this.call(path, init));
  /** Threads: their replies, following them, reading them, your threads inbox (README, "Threads"). */
  readonly threads = new ThreadCalls(
    (path, init) => this.call(path, init),
    () => this.realtime,
  );
  /** Push devices: the VAPID key, registering and removing devices (README, "Push notifications"). */
  readonly push = new PushCalls((path, init) => this.call(path, init));
  /** Registers this browser's PushSubscription, or `{apns: token}` / `{fcm: token}` (as `push.register`). */
  registerPush = (target: PushTarget): Promise<PushDevice> => this.push.register(target);
  /** Removes a push device (as `push.unregister`). */
  unregisterPush = (deviceId: string): Promise<void> => this.push.unregister(deviceId);
  private readonly uploads = new UploadCalls((path, init) => this.call(path, init), (...args) => this.fetchImpl(...args));

  // ---- realtime -----------------------------------------------------------------------------------

  connect(): Promise<void> {
    return this.realtime.connect();
  }

  close(): void {
    this.realtime.close();
  }

  on: Realtime['on'] = ((type: string, handler: (e: never) => void) => this.realtime.on(type as never, handler)) as Realtime['on'];

  // ---- users --------------------------------------------------------------------------------------

  me(): Promise<User> {
    return this.call('api/users/me');
  }

  /**
   * Blocks a user: no new direct chat between you, and neither of you sends into your direct chat
   * (`USER_BLOCKED`); the blocked user is not told. At most 1,000 (`BLOCK_LIMIT_REACHED`).
   */
  blockUser(userId: string): Promise<{ userId: string; blockedAt: string }> {
    return this.call('api/users/me/blocks', { method: 'POST', body: { userId } });
  }

  async unblockUser(userId: string): Promise<void> {
    await this.call(`api/users/me/blocks/${encodeURIComponent(userId)}`, { method: 'DELETE' });
  }

  /** The users you block, by user id, a page at a time. */
  listBlocks(page: { size?: number; cursor?: string } = {}): Promise<{ blocks: { userId: string; blockedAt: string }[]; nextCursor?: string }> {
    const q = new URLSearchParams();
    if (page.size !== undefined) q.set('size', String(page.size));
    if (page.cursor !== undefined) q.set('cursor', page.cursor);
    return this.call(`api/users/me/blocks${q.size > 0 ? `?${q}` : ''}`);
  }

  // ---- moderation (a group's owner and admins; any member flags) ---------------------------------

  /** Flags a message of a chat you are in for review, once (409 ALREADY_FLAGGED); not your own. */
  flagMessage(chatId: string, messageId: string, reason: string): Promise<Flag & { messageHidden: boolean }> {
    return this.call(`api/messages/${encodeURIComponent(chatId)}/${encodeURIComponent(messageId)}/flags`, { method: 'POST', body: { reason } });
  }

  /** Mutes a member of a group you own or administer (an admin mutes plain members only); until `expiresAt` or unmuted. */
  muteMember(chatId: string, input: { userId: string; expiresAt?: string }): Promise<Mute> {
    return this.moderation.muteMember(chatId, input);
  }
  unmuteMember(chatId: string, userId: string): Promise<void> {
    return this.moderation.unmuteMember(chatId, userId);
  }
  listMutes(chatId: string): Promise<Mute[]> {
    return this.moderation.listMutes(chatId);
  }
  /** Bans a user from a group you own or administer: removed, and not added back until it lifts. */
  banMember(chatId: string, input: { userId: string; reason?: string; expiresAt?: string }): Promise<ChatBan> {
    return this.moderation.banMember(chatId, input);
  }
  unbanMember(chatId: string, userId: string): Promise<void> {
    return this.moderation.unbanMember(chatId, userId);
  }
  listChatBans(chatId: string, page: { size?: number; cursor?: string } = {}): Promise<{ bans: ChatBan[]; nextCursor?: string }> {
    return this.moderation.listChatBans(chatId, page);
  }

  // ---- chats --------------------------------------------------------------------------------------

  /** The direct chat with `userId`: created on first call, the same chat on every later one. */
  directChat(userId: string, data?: Record<string, unknown>): Promise<ChatSummary> {
    return this.call('api/chats', { method: 'POST', body: { type: 'direct', userId, ...(data ? { data } : {}) } });
  }

  createGroup(name: string, memberIds: string[], data?: Record<string, unknown>): Promise<ChatSummary> {
    return this.call('api/chats', { method: 'POST', body: { type: 'group', name, memberIds, ...(data ? { data } : {}) } });
  }

  /** One page of my chats, most recent activity first. */
  async listChats(options: { size?: number; cursor?: string } = {}): Promise<{ chats: ChatSummary[]; nextCursor?: string }> {
    const page = await this.call<{ chats: ChatSummary[]; nextCursor?: string }>('api/chats', { query: options });
    for (const chat of page.chats) this.realtime.track(chat.chatId, chat.lastSeq);
    return page;
  }

  /** Every chat of mine, page by page. */
  async *chats(pageSize = 50): AsyncGenerator<ChatSummary> {
    let cursor: string | undefined;
    do {
      const page = await this.listChats({ size: pageSize, ...(cursor ? { cursor } : {}) });
      yield* page.chats;
      cursor = page.nextCursor;
    } while (cursor);
  }

  getChat(chatId: string): Promise<ChatSummary> {
    return this.call(`api/chats/${enc(chatId)}`);
  }

  renameChat(chatId: string, name: string): Promise<ChatSummary> {
    return this.updateChat(chatId, { name });
  }

  /** A group's name, a chat's data (replacing it; `{}` removes it), or both. */
  updateChat(chatId: string, change: { name?: string; data?: Record<string, unknown> }): Promise<ChatSummary> {
    return this.call(`api/chats/${enc(chatId)}`, { method: 'PUT', body: change });
  }

  async deleteChat(chatId: string): Promise<void> {
    await this.call(`api/chats/${enc(chatId)}`, { method: 'DELETE' });
  }

  async members(chatId: string): Promise<Member[]> {
    return (await this.call<{ members: Member[] }>(`api/chats/${enc(chatId)}/members`)).members;
  }

  async addMembers(chatId: string, userIds: string[], role: Exclude<Role, 'owner'> = 'member'): Promise<Member[]> {
    return (await this.call<{ members: Member[] }>(`api/chats/${enc(chatId)}/members`, { method: 'POST', body: { userIds, role } })).members;
  }

  setRole(chatId: string, userId: string, role: Exclude<Role, 'owner'>): Promise<Member> {
    return this.call(`api/chats/${enc(chatId)}/members/${enc(userId)}`, { method: 'PUT', body: { role } });
  }

  async removeMember(chatId: string, userId: string): Promise<void> {
    await this.call(`api/chats/${enc(chatId)}/members/${enc(userId)}`, { method: 'DELETE' });
  }

  async leave(chatId: string): Promise<void> {
    await this.call(`api/chats/${enc(chatId)}/leave`, { method: 'POST' });
  }

  // ---- messages -----------------------------------------------------------------------------------

  /**
   * Sends over the realtime connection when it is open or being re-established (queued, and re-sent
   * with the same idempotency key after a reconnect), else over REST. Resolves once durable, with the
   * message as stored: an application's before-send hook may have replaced its content. Rejected
   * by that hook: `ChatApiError` with code `MESSAGE_REJECTED` (its `problem.detail` is the hook's
   * reason); the hook failing under its `closed` policy: `BEFORE_SEND_FAILED`. A send that carries
   * attachments is sent again, with the same idempotency key, while the service answers
   * `UNAVAILABLE` (its object store is down), as `uploadFile`'s steps are: 5 attempts, about 8 s.
   */
  async send(chatId: string, content: string, options: SendOptions = {}): Promise<Message> {
    const idempotencyKey = options.idempotencyKey ?? uuid();
    const body = {
      chatId,
      content,
      idempotencyKey,
      ...(options.replyTo ? { replyTo: options.replyTo } : {}),
      ...(options.attachments?.length ? { attachments: options.attachments } : {}),
      ...(options.data ? { data: options.data } : {}),
      ...(options.mentions?.length ? { mentions: options.mentions } : {}),
      ...(options.parentId ? { parentId: options.parentId } : {}),
      ...(options.showInChat ? { showInChat: true } : {}),
    };
    const attempt = async () => {
      if (this.realtime.status !== 'idle' && this.realtime.status !== 'closed') {
        return (await this.realtime.action<{ message: Message }>({ type: 'message.send', ...body })).message;
      }
      const { chatId: _c, ...rest } = body;
      return (await this.call<{ message: Message }>(`api/messages/${enc(chatId)}`, { method: 'POST', body: rest })).message;
    };
    return body.attachments ? withRetries(attempt, storeDown) : attempt();
  }

  /**
   * Uploads a file to a chat and finalizes it: resolves with the attachment, whose `id` a send
   * then carries (`send(chatId, '', {attachments: [a.id]})`); see UploadCalls.uploadFile.
   */
  uploadFile(chatId: string, file: Blob | Uint8Array, options: UploadOptions = {}): Promise<Attachment> {
    return this.uploads.uploadFile(chatId, file, options);
  }

  /** Finishes an interrupted upload, putting only what the service lacks; see UploadCalls.resumeUpload. */
  resumeUpload(chatId: string, uploadId: string, file: Blob | Uint8Array, options: Pick<UploadOptions, 'onProgress'> = {}): Promise<Attachment> {
    return this.uploads.resumeUpload(chatId, uploadId, file, options);
  }

  /** Signed URLs of an attachment and its thumbnail, valid 5 minutes (members only). */
  attachmentUrls(chatId: string, attachmentId: string): Promise<AttachmentUrls> {
    return this.call<AttachmentUrls>(`api/chats/${enc(chatId)}/attachments/${enc(attachmentId)}`);
  }

  /** New content, or `{content?, data?}`: new content, new data (replacing it; `{}` removes it), or both. */
  async edit(chatId: string, messageId: string, change: string | { content?: string; data?: Record<string, unknown> }): Promise<Message> {
    const body = typeof change === 'string' ? { content: change } : change;
    return this.viaSocketOrRest({ type: 'message.edit', chatId, messageId, ...body }, `api/messages/${enc(chatId)}/${enc(messageId)}`, { method: 'PUT', body });
  }

  async deleteMessage(chatId: string, messageId: string): Promise<Message> {
    return this.viaSocketOrRest({ type: 'message.delete', chatId, messageId }, `api/messages/${enc(chatId)}/${enc(messageId)}`, { method: 'DELETE' });
  }

  async react(chatId: string, messageId: string, reaction: string): Promise<Message> {
    return this.viaSocketOrRest({ type: 'reaction.add', chatId, messageId, reaction }, `api/messages/${enc(chatId)}/${enc(messageId)}/reactions`, { method: 'POST', body: { reaction } });
  }

  /** The chat's pinned messages (at most 50), the newest pin first, each with its message as it is now. */
  async pins(chatId: string): Promise<Pinned[]> {
    return (await this.call<{ pins: Pinned[] }>(`api/chats/${enc(chatId)}/pins`)).pins;
  }

  /** Pins a message (a group's owners and admins; either member of a direct chat); pinning it again returns the pin there. */
  async pin(chatId: string, messageId: string): Promise<Pin> {
    return (await this.actOrCall<{ pin: Pin }>({ type: 'pin.add', chatId, messageId }, `api/chats/${enc(chatId)}/pins`, { method: 'POST', body: { messageId } })).pin;
  }

  async unpin(chatId: string, messageId: string): Promise<void> {
    await this.actOrCall({ type: 'pin.remove', chatId, messageId }, `api/chats/${enc(chatId)}/pins/${enc(messageId)}`, { method: 'DELETE' });
  }

  /**
   * A message's reactions in full, a page at a time, oldest first (a message carries only its
   * counts and latest 10); `reaction` lists one value only. Pass `next` as `after` for the next page.
   */
  reactions(chatId: string, messageId: string, page: { after?: string; limit?: number; reaction?: string } = {}): Promise<{ reactions: Reaction[]; next?: string }> {
    return this.call(`api/messages/${enc(chatId)}/${enc(messageId)}/reactions`, { query: page });
  }

  async unreact(chatId: string, messageId: string, reaction: string): Promise<Message> {
    return this.viaSocketOrRest({ type: 'reaction.remove', chatId, messageId, reaction }, `api/messages/${enc(chatId)}/${enc(messageId)}/reactions/${enc(reaction)}`, { method: 'DELETE' });
  }

  /**
   * Marks messages up to `seq` read; resolves with the read mark now stored. Calls for one chat are
   * coalesced: while one is on its way, later ones wait and go as one, with the highest seq asked
   * for (so marking every incoming message read stays within the server's write budget).
   */
  markRead(chatId: string, seq: number): Promise<number> {
    const state = this.readMarks.get(chatId);
    if (!state) return this.sendReadMark(chatId, seq);
    if (state.queued) {
      state.queued.seq = Math.max(state.queued.seq, seq);
      return state.queued.done;
    }
    const queued: { seq: number; done: Promise<number> } = { seq, done: Promise.resolve(0) };
    queued.done = state.sending.then(
      () => this.sendReadMark(chatId, queued.seq),
      () => this.sendReadMark(chatId, queued.seq),
    );
    state.queued = queued;
    return queued.done;
  }

  private sendReadMark(chatId: string, seq: number): Promise<number> {
    const sending =
      this.realtime.status === 'open'
        ? this.realtime.action<{ readSeq: number }>({ type: 'read.mark', chatId, seq }).then((r) => r.readSeq)
        : this.call<{ readSeq: number }>(`api/chats/${enc(chatId)}/read`, { method: 'POST', body: { seq } }).then((r) => r.readSeq);
    const state: ReadMarkState = { sending };
    this.readMarks.set(chatId, state);
    const settled = () => {
      if (this.readMarks.get(chatId) === state && !state.queued) this.readMarks.delete(chatId);
    };
    sending.then(settled, settled);
    return sending;
  }

  /** Tells the chat you are typing (realtime only; dropped when offline). */
  async typing(chatId: string, typing: boolean): Promise<void> {
    if (this.realtime.status !== 'open') return;
    await this.realtime.action({ type: typing ? 'typing.start' : 'typing.stop', chatId });
  }

  /**
   * Which of these users (1–100) are online now, on any node: a snapshot to start from (after
   * `connect()`); `presence.online` and `presence.offline` events keep it current for the users
   * you share a chat with.
   */
  async presence(userIds: string[]): Promise<string[]> {
    return (await this.realtime.action<{ online: string[] }>({ type: 'presence.query', userIds })).online;
  }

  private async viaSocketOrRest(action: Record<string, unknown> & { type: string }, path: string, init: Omit<RequestOptions, 'token'>): Promise<Message> {
    return (await this.actOrCall<{ message: Message }>(action, path, init)).message;
  }

  /** Over the socket when one is open (its ack's result), else the REST call (its body): the two carry the same result. */
  private actOrCall<T>(action: Record<string, unknown> & { type: string }, path: string, init: Omit<RequestOptions, 'token'>): Promise<T> {
    if (this.realtime.status !== 'idle' && this.realtime.status !== 'closed') return this.realtime.action<T>(action);
    return this.call<T>(path, init);
  }

  /** One page of history, newest first (spec §4.2); `lastMessage` is the oldest id of the previous page. */
  /**
   * Searches the messages of the chats you are in (README, "Search"): every word of `q`, the last
   * as a prefix too, newest first, with where the words are in each message's content.
   */
  search(q: string, options: SearchOptions = {}): Promise<SearchPage> {
    return this.call('api/search/messages', { query: searchQuery(q, options) });
  }

  async getMessages(chatId: string, options: { size?: number; lastMessage?: string } = {}): Promise<Message[]> {
    const { messages } = await this.call<{ messages: Message[] }>(`api/messages/getMessages/${enc(chatId)}`, { query: options });
    // The newest page tells where the chat stands; realtime follows it from there.
    if (!options.lastMessage && messages[0]) this.realtime.track(chatId, messages[0].seq);
    return messages;
  }

  /** History page by page, newest first, until the first message. */
  async *history(chatId: string, pageSize = 50): AsyncGenerator<Message[]> {
    let lastMessage: string | undefined;
    for (;;) {
      const page = await this.getMessages(chatId, { size: pageSize, ...(lastMessage ? { lastMessage } : {}) });
      if (page.length === 0) return;
      yield page;
      lastMessage = page[page.length - 1]!.messageId;
    }
  }

  /** Messages with seq in [fromSeq, toSeq], oldest first (how realtime repairs a gap). */
  async messagesBetween(chatId: string, fromSeq: number, toSeq: number): Promise<Message[]> {
    const found: Message[] = [];
    for await (const page of this.history(chatId, 100)) {
      for (const m of page) if (m.seq >= fromSeq && m.seq <= toSeq) found.push(m);
      if (page[page.length - 1]!.seq <= fromSeq) break;
    }
    return found.sort((a, b) => a.seq - b.seq);
  }
}
