import { ChatApiError, ChatNetworkError, type AccountSession, type MfaChallenge, type Problem } from '../../../sdk/management.ts';

/**
 * The dashboard's session with the management API, held as the API holds it: bearer tokens, no
 * cookie. The access token lives in this object; the pair is also kept in sessionStorage (this tab
 * only, gone when the tab closes) because a reload must be able to refresh, and the refresh route
 * takes the session's last access token as bearer beside the refresh token (README, "The
 * dashboard"). The tokens are refreshed a minute before the access token expires, and after a 401
 * TOKEN_EXPIRED; one refresh at a time however many requests need it.
 */

const STORAGE_KEY = 'chat-service.dashboard.session';
const REFRESH_BEFORE_EXPIRY_MS = 60_000;

interface Stored {
  accessToken: string;
  refreshToken: string;
  email: string;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Why the session ended, for the login form to say. */
export type SignedOutReason = 'logout' | 'expired';

/** Seconds since the epoch at which a JWT expires (its `exp` claim), or undefined if unreadable. */
function expiryOf(jwt: string): number | undefined {
  try {
    const payload = jwt.split('.')[1] ?? '';
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp : undefined;
  } catch {
    return undefined;
  }
}

async function send<T>(method: Method, path: string, body?: unknown, token?: string): Promise<T> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (cause) {
    throw new ChatNetworkError('cannot reach the service', { cause });
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch (cause) {
    throw new ChatNetworkError(`the service answered ${res.status} with something that is not JSON`, { cause });
  }
  if (!res.ok) {
    const problem = parsed as Partial<Problem> | undefined;
    if (problem && typeof problem.code === 'string') throw new ChatApiError(problem as Problem);
    throw new ChatNetworkError(`the service answered ${res.status} ${res.statusText}`);
  }
  return parsed as T;
}

export class DashboardApi {
  private stored: Stored | undefined;
  private refreshing: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly listeners = new Set<(reason?: SignedOutReason) => void>();

  constructor(private readonly storage: Storage = sessionStorage) {
    try {
      const raw = storage.getItem(STORAGE_KEY);
      if (raw) this.adopt(JSON.parse(raw) as Stored);
    } catch {
      storage.removeItem(STORAGE_KEY);
    }
  }

  /** The signed-in account's e-mail, or undefined when signed out. */
  get email(): string | undefined {
    return this.stored?.email;
  }

  /** Called on every sign-in and sign-out (with the reason). Returns the unsubscribe function. */
  onChange(listener: (reason?: SignedOutReason) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async register(input: { companyName: string; email: string; password: string }): Promise<void> {
    const session = await send<AccountSession>('POST', '/api/auth/register', input);
    this.signIn(session);
  }

  /** Logs in; with MFA on the account, returns the challenge to complete with `verifyMfa`. */
  async login(input: { email: string; password: string }): Promise<MfaChallenge | undefined> {
    const answer = await send<AccountSession | MfaChallenge>('POST', '/api/auth/login', input);
    if (answer.mfaRequired === true) return answer;
    this.signIn(answer);
    return undefined;
  }

  async verifyMfa(mfaToken: string, code: string): Promise<void> {
    this.signIn(await send<AccountSession>('POST', '/api/auth/mfa/verify', { mfaToken, code }));
  }

  /** Ends the session on the service too, so its tokens stop working at once, wherever they were copied. */
  async logout(): Promise<void> {
    const stored = this.stored;
    this.forget('logout');
    if (stored) await send('POST', '/api/auth/logout', { refreshToken: stored.refreshToken }, stored.accessToken).catch(() => undefined);
  }

  /** A management API call with the session's access token. */
  async call<T>(method: Method, path: string, body?: unknown): Promise<T> {
    const stored = this.stored;
    if (!stored) throw new ChatApiError({ type: 'about:blank', title: 'Not signed in', status: 401, detail: 'log in first', code: 'AUTH_REQUIRED' });
    try {
      return await send<T>(method, path, body, stored.accessToken);
    } catch (error) {
      if (!(error instanceof ChatApiError) || error.status !== 401) throw error;
      if (error.code !== 'TOKEN_EXPIRED') {
        // The session ended elsewhere (logout in another tab, a password change, an operator).
        if (error.code === 'TOKEN_INVALID' || error.code === 'AUTH_REQUIRED') this.forget('expired');
        throw error;
      }
      await this.refresh(stored);
      if (!this.stored) throw error;
      return send<T>(method, path, body, this.stored.accessToken);
    }
  }

  private signIn(session: AccountSession): void {
    this.adopt({ accessToken: session.accessToken, refreshToken: session.refreshToken, email: session.email });
    for (const listener of this.listeners) listener();
  }

  private adopt(next: Stored): void {
    this.stored = next;
    this.storage.setItem(STORAGE_KEY, JSON.stringify(next));
    clearTimeout(this.timer);
    const exp = expiryOf(next.accessToken);
    const wait = exp === undefined ? 0 : Math.max(0, exp * 1000 - Date.now() - REFRESH_BEFORE_EXPIRY_MS);
    this.timer = setTimeout(() => void this.refresh(next).catch(() => undefined), wait);
  }

  private forget(reason: SignedOutReason): void {
    const had = this.stored !== undefined;
    this.stored = undefined;
    clearTimeout(this.timer);
    this.storage.removeItem(STORAGE_KEY);
    if (had) for (const listener of this.listeners) listener(reason);
  }

  /**
   * Rotates the pair `from`, unless that was done already (a request that failed with the old
   * access token while another refresh ran). A refusal ends the session here: the refresh token is
   * unknown, expired, or was used twice (then the service has revoked the whole session).
   */
  private refresh(from: Stored): Promise<void> {
    if (this.stored !== from) return this.refreshing ?? Promise.resolve();
    this.refreshing ??= send<{ accessToken: string; refreshToken: string }>('POST', '/api/auth/refresh', { refreshToken: from.refreshToken }, from.accessToken)
      .then(
        (next) => this.adopt({ ...from, ...next }),
        (error: unknown) => {
          if (error instanceof ChatApiError) this.forget('expired');
          throw error;
        },
      )
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }
}
