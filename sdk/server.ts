import { ChatStateError } from './errors.ts';
import { request } from './http.ts';
import type { User, UserSession } from './types.ts';

export * from './errors.ts';
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

  /** Registers a user; `username` is unique per application (409 USERNAME_TAKEN). */
  registerUser(input: { username: string; displayName?: string }): Promise<User> {
    return this.call('api/users', { method: 'POST', body: input });
  }

  /** Signs a user in by id or username; hand the result to the browser's `setAuth`. */
  signIn(who: { userId: string } | { username: string }): Promise<UserSession> {
    return this.call('api/users/signin', { method: 'POST', body: who });
  }

  getUser(userId: string): Promise<User> {
    return this.call(`api/users/${encodeURIComponent(userId)}`);
  }

  updateUser(userId: string, input: { displayName: string }): Promise<User> {
    return this.call(`api/users/${encodeURIComponent(userId)}`, { method: 'PUT', body: input });
  }

  /** Deletes a user: its sign-ins end, it leaves every chat, its sockets close. */
  async deleteUser(userId: string): Promise<void> {
    await this.call(`api/users/${encodeURIComponent(userId)}`, { method: 'DELETE' });
  }

  /** Which application and key this API key is (a cheap credentials check). */
  whoAmI(): Promise<{ appId: string; keyId: string; cluster: string }> {
    return this.call('api/server/whoami');
  }
}
