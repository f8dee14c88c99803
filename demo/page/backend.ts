import type { UserSession } from '../../sdk/client.ts';

/**
 * The demo's own backend (demo/serve.ts). In a real product this is your server: it knows your
 * users, holds the API key, and hands a signed-in user's tokens to the page. The page never sees
 * the API key.
 */

export interface DemoUser {
  userId: string;
  username: string;
  displayName: string;
}

/** What sign-in hands the page: the user's tokens, who it is, and where the chat service is. */
export interface SignedIn extends UserSession {
  username: string;
  displayName: string;
  baseUrl: string;
}

async function call<T>(path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch {
    throw new Error('the demo backend did not answer; is npm run demo still running?');
  }
  const answer = (await res.json().catch(() => ({}))) as T & { error?: string };
  if (!res.ok) throw new Error(answer.error ?? `the demo backend answered ${res.status}`);
  return answer;
}

export const signIn = (username: string) => call<SignedIn>('/demo/signin', { username });
export const listUsers = async () => (await call<{ users: DemoUser[] }>('/demo/users')).users;
export const addUser = (username: string) => call<DemoUser>('/demo/users', { username });

/**
 * The session survives a reload of this tab (sessionStorage is per tab, so two windows can be two
 * users). The refresh token is single-use: each new pair the SDK gets replaces the stored one.
 */
const KEY = 'chat-demo-session';

export function savedSession(): SignedIn | undefined {
  try {
    const text = sessionStorage.getItem(KEY);
    return text ? (JSON.parse(text) as SignedIn) : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(session: SignedIn | undefined): void {
  if (session) sessionStorage.setItem(KEY, JSON.stringify(session));
  else sessionStorage.removeItem(KEY);
}
