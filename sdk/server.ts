import { ChatStateError } from './errors.ts';
import { request } from './http.ts';
import { ChatModerationCalls } from './chat-moderation.ts';
import type { Ban, BlocklistEntry, ChatBan, Flag, Message, ModerationAction, Mute, QueuedFlag, SearchOptions, SearchPage, User, UserSession } from './types.ts';
import { searchQuery } from './search-query.ts';

export * from './errors.ts';
export { isRetryable, RETRYABLE_CODES, type ErrorCode } from './codes.ts';
export type * from './types.ts';

export interface ServerClientOptions {
  /** The application's `clusterEndpoint`. */
  baseUrl: string;
  /** The API key. Server side only: never ship it to a browser. */
  apiKey: string;
  fetch?: typeof fetch;
}

/**
 * The integrator's backend: registers chat users and signs them in with the API key, then hands
 * `{ jwt, refreshToken, userId }` to the browser (spec §1.4). Refuses to run in a browser, because an
 * API key in frontend code is a leaked key (spec §5 rule 1).
 */
export class ChatServer {
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: ServerClientOptions) {
    // A page or a web worker: either way, code that ships to users.
    if ('document' in globalThis || 'WorkerGlobalScope' in globalThis) {
      throw new ChatStateError('ChatServer holds an API key and must not run in a browser; sign users in from your backend');
    }
    if (!options.apiKey) throw new ChatStateError('apiKey is required');
    this.fetchImpl = options.fetch ?? fetch;
  }

  private call<T>(path: string, init: Parameters<typeof request>[2] = {}): Promise<T> {
    return request<T>(this.options.baseUrl, path, { ...init, token: this.options.apiKey }, this.fetchImpl);
  }

  private readonly moderation = new ChatModerationCalls((path, init) => this.call(path, init));

  /** Registers a user; `username` is unique per application (409 USERNAME_TAKEN). */
  registerUser(input: { username: string; displayName?: string; data?: Record<string, unknown> }): Promise<User> {
    return this.call('api/users', { method: 'POST', body: input });
  }

  /** Signs a user in by id or username; hand the result to the browser's `setAuth`. */
  signIn(who: { userId: string } | { username: string }): Promise<UserSession> {
    return this.call('api/users/signin', { method: 'POST', body: who });
  }

  getUser(userId: string): Promise<User> {
    return this.call(`api/users/${encodeURIComponent(userId)}`);
  }

  /** A new display name, new data (replacing it; `{}` removes it), or both. */
  updateUser(userId: string, input: { displayName?: string; data?: Record<string, unknown> }): Promise<User> {
    return this.call(`api/users/${encodeURIComponent(userId)}`, { method: 'PUT', body: input });
  }

  /**
   * Sends a message for a member (`senderId`), as your backend: a `system` message (a notice, which
   * members cannot send nor edit) or a regular one. Answered once it is durable; `idempotencyKey`
   * makes a retry safe as for a user's send.
   */
  async sendMessage(chatId: string, input: { senderId: string; content: string; type?: 'regular' | 'system'; data?: Record<string, unknown>; idempotencyKey?: string; replyTo?: string }): Promise<Message> {
    return (await this.call<{ message: Message }>(`api/messages/${encodeURIComponent(chatId)}`, { method: 'POST', body: input })).message;
  }

  /** Searches the messages of every chat of the application (README, "Search"), as `ChatClient.search` does a user's. */
  searchMessages(q: string, options: SearchOptions = {}): Promise<SearchPage> {
    return this.call('api/search/all-messages', { query: searchQuery(q, options) });
  }

  /** Deletes a user: its sign-ins end, it leaves every chat, its sockets close. */
  async deleteUser(userId: string): Promise<void> {
    await this.call(`api/users/${encodeURIComponent(userId)}`, { method: 'DELETE' });
  }

  /**
   * Bans a user from the application: its sockets close (4502) on every node, and its sign-in,
   * refresh and requests are refused with USER_BANNED until `expiresAt` (ISO time, in the future)
   * or `unbanUser`. A ban in force is replaced.
   */
  banUser(input: { userId: string; reason?: string; expiresAt?: string }): Promise<Ban> {
    return this.call('api/moderation/bans', { method: 'POST', body: input });
  }

  /** Lifts a user's ban (404 BAN_NOT_FOUND when it has none in force). */
  async unbanUser(userId: string): Promise<void> {
    await this.call(`api/moderation/bans/${encodeURIComponent(userId)}`, { method: 'DELETE' });
  }

  /** The bans in force, by user id, a page at a time (`size` 1–100, default 50). */
  listBans(page: { size?: number; cursor?: string } = {}): Promise<{ bans: Ban[]; nextCursor?: string }> {
    return this.call(`api/moderation/bans${query(page)}`);
  }

  /** The application's blocklist (no entries until one is set). */
  getBlocklist(): Promise<{ entries: BlocklistEntry[]; updatedAt?: string }> {
    return this.call('api/moderation/blocklist');
  }

  /**
   * Replaces the application's blocklist (at most 10,000 entries of 1–100 characters): sends and
   * edits containing a `block` entry are refused (CONTENT_BLOCKED); `mask` entries are starred out.
   */
  setBlocklist(entries: BlocklistEntry[]): Promise<{ entries: BlocklistEntry[]; updatedAt: string }> {
    return this.call('api/moderation/blocklist', { method: 'PUT', body: { entries } });
  }

  // Mutes and bans in any chat (the routes a group's owner and admins call too: see ChatModerationCalls).

  /** Mutes a member (until `expiresAt`, ISO time in the future; absent: until unmuted); a mute in force is replaced. */
  muteMember(chatId: string, input: { userId: string; expiresAt?: string }): Promise<Mute> {
    return this.moderation.muteMember(chatId, input);
  }
  /** Lifts a member's mute (404 MUTE_NOT_FOUND when it has none in force). */
  unmuteMember(chatId: string, userId: string): Promise<void> {
    return this.moderation.unmuteMember(chatId, userId);
  }
  /** A chat's members muted now. */
  listMutes(chatId: string): Promise<Mute[]> {
    return this.moderation.listMutes(chatId);
  }
  /** Bans a user from a group: a member is removed, and nobody adds it back (MEMBER_BANNED) until it lifts. */
  banMember(chatId: string, input: { userId: string; reason?: string; expiresAt?: string }): Promise<ChatBan> {
    return this.moderation.banMember(chatId, input);
  }
  /** Lifts a user's ban from a group (404 BAN_NOT_FOUND when none is in force). */
  unbanMember(chatId: string, userId: string): Promise<void> {
    return this.moderation.unbanMember(chatId, userId);
  }
  /** A group's bans in force, by user id, a page at a time. */
  listChatBans(chatId: string, page: { size?: number; cursor?: string } = {}): Promise<{ bans: ChatBan[]; nextCursor?: string }> {
    return this.moderation.listChatBans(chatId, page);
  }

  /** Open flags, newest first, a page at a time, each with its message as stored. */
  listFlags(page: { size?: number; cursor?: string } = {}): Promise<{ flags: QueuedFlag[]; nextCursor?: string }> {
    return this.call(`api/moderation/flags${query(page)}`);
  }

  /**
   * Resolves a flag and every open flag of the same message: `dismiss` (a hidden message is shown
   * again), `delete` the message, or `ban` its sender from the application (until `expiresAt`).
   */
  resolveFlag(flagId: string, input: { action: 'dismiss' | 'delete' | 'ban'; reason?: string; expiresAt?: string }): Promise<{ action: 'dismiss' | 'delete' | 'ban'; flags: Flag[] }> {
    return this.call(`api/moderation/flags/${encodeURIComponent(flagId)}/resolve`, { method: 'POST', body: input });
  }

  /** The application's moderation settings: `flagHideThreshold`, the open flags that hide a message (0: never). */
  getModerationSettings(): Promise<{ flagHideThreshold: number }> {
    return this.call('api/moderation/settings');
  }

  setModerationSettings(settings: { flagHideThreshold: number }): Promise<{ flagHideThreshold: number }> {
    return this.call('api/moderation/settings', { method: 'PUT', body: settings });
  }

  /** The moderation log, newest first, a page at a time; kept 90 days. */
  listModerationActions(page: { size?: number; cursor?: string } = {}): Promise<{ actions: ModerationAction[]; nextCursor?: string }> {
    return this.call(`api/moderation/actions${query(page)}`);
  }

  /** Which application and key this API key is (a cheap credentials check). */
  whoAmI(): Promise<{ appId: string; keyId: string; cluster: string }> {
    return this.call('api/server/whoami');
  }
}

function query(page: { size?: number; cursor?: string }): string {
  const q = new URLSearchParams();
  if (page.size !== undefined) q.set('size', String(page.size));
  if (page.cursor !== undefined) q.set('cursor', page.cursor);
  const s = q.toString();
  return s ? `?${s}` : '';
}
