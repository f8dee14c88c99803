import { ChatApiError, ChatStateError } from './errors.ts';
import { request } from './http.ts';
import type { UserSession } from './types.ts';

/** Seconds since the epoch at which a JWT expires, read without verifying it (the server verifies). */
export function jwtExpiry(jwt: string): number | undefined {
  const payload = jwt.split('.')[1];
  if (!payload) return undefined;
  try {
    const json = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: unknown };
    return typeof json.exp === 'number' ? json.exp : undefined;
  } catch {
    return undefined;
  }
}

export interface AuthOptions {
  baseUrl: string;
  fetch: typeof fetch;
  /** Refresh this many seconds before the JWT expires. */
  refreshMarginSeconds: number;
  /** Told every new pair, so the app can persist it (the old refresh token no longer works). */
  onTokens?: (session: UserSession) => void;
  /** Told when the sign-in cannot be refreshed any more: the app must sign the user in again. */
  onSignedOut?: (error: unknown) => void;
  now?: () => number;
}

const RETRY_ON = new Set(['TOKEN_EXPIRED', 'TOKEN_INVALID']);

/**
 * Holds the user's tokens and keeps the JWT fresh: refreshes it shortly before it expires and when
 * the server says it expired, one refresh at a time however many calls need one (single-flight).
 */
export class AuthManager {
  private session: (UserSession & { expiresAt: number }) | undefined;
  private inflight: Promise<string> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: AuthOptions) {
    this.now = options.now ?? Date.now;
  }

  set(session: UserSession): void {
    const exp = jwtExpiry(session.jwt);
    const expiresAt = exp !== undefined ? exp * 1000 : this.now() + (session.expiresIn ?? 900) * 1000;
    this.session = { ...session, expiresAt };
  }

  get userId(): string | undefined {
    return this.session?.userId;
  }

  /** A JWT valid for at least the margin, refreshing first if needed. */
  async token(): Promise<string> {
    const s = this.session;
    if (!s) throw new ChatStateError('call setAuth({ jwt, refreshToken, userId }) first');
    if (s.expiresAt - this.now() > this.options.refreshMarginSeconds * 1000) return s.jwt;
    return this.refresh();
  }

  /** Exchanges the refresh token for a new pair; concurrent callers share one request. */
  refresh(): Promise<string> {
    this.inflight ??= (async () => {
      const s = this.session;
      if (!s) throw new ChatStateError('not signed in');
      try {
        const next = await request<UserSession>(this.options.baseUrl, 'api/users/refresh', { method: 'POST', body: { refreshToken: s.refreshToken } }, this.options.fetch);
        this.set(next);
        this.options.onTokens?.(next);
        return next.jwt;
      } catch (error) {
        if (error instanceof ChatApiError && error.status === 401) {
          this.session = undefined;
          this.options.onSignedOut?.(error);
        }
        throw error;
      } finally {
        this.inflight = undefined;
      }
    })();
    return this.inflight;
  }

  /** Runs an authenticated call; on a 401 for an expired or stale JWT, refreshes once and retries. */
  async call<T>(fn: (jwt: string) => Promise<T>): Promise<T> {
    const jwt = await this.token();
    try {
      return await fn(jwt);
    } catch (error) {
      if (!(error instanceof ChatApiError) || error.status !== 401 || !RETRY_ON.has(error.code)) throw error;
      // Another call may have refreshed meanwhile; only refresh if the JWT is still the one refused.
      const fresh = this.session && this.session.jwt !== jwt ? this.session.jwt : await this.refresh();
      return fn(fresh);
    }
  }
}
