/**
 * Sets up this service for a run through its public interfaces: an account, an application and an
 * API key on the control service, chat users signed in on a node, group chats. Bounded
 * concurrency; every failed call throws with the service's answer.
 */

export interface ChatUser {
  userId: string;
  jwt: string;
}

/**
 * One JSON call to the service as a bench provisions it: `token` as the bearer (a dashboard
 * access token or a user JWT); the answer's JSON, undefined for 204; throws on any other non-2xx.
 */
export async function apiCall(method: string, url: string, token?: string, body?: unknown): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${new URL(url).pathname}: ${res.status} ${text}`);
  return res.status === 204 ? undefined : JSON.parse(text);
}

const call = (url: string, body: unknown, token?: string): Promise<Record<string, any>> => apiCall('POST', url, token, body);

/** Runs `task(i)` for i in [0, n), `concurrency` at a time, reporting each completion. */
export async function inParallel<T>(n: number, concurrency: number, task: (i: number) => Promise<T>, done?: () => void): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await task(i);
        done?.();
      }
    }),
  );
  return out;
}

export interface Provisioned {
  appId: string;
  apiKey: string;
  users: ChatUser[];
  /** The dashboard account's access token (management API: webhooks). */
  accessToken: string;
}

/** An application with `users` signed-in chat users, created through `nodeUrls` in turn. */
export async function provisionApp(controlUrl: string, nodeUrls: string[], users: number, progress?: () => void): Promise<Provisioned> {
  const account = await call(`${controlUrl}/api/auth/register`, { companyName: 'Bench', email: `bench-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`, password: 'bench-password' });
  const app = await call(`${controlUrl}/api/client/apps`, { name: 'bench' }, account.accessToken);
  const key = (await call(`${controlUrl}/api/client/apps/${app.id}/keys`, undefined, account.accessToken)).token as string;
  const created = await inParallel(users, 32, async (i) => {
    const node = nodeUrls[i % nodeUrls.length]!;
    const user = await call(`${node}/api/users`, { username: `u${i}` }, key);
    const signedIn = await call(`${node}/api/users/signin`, { userId: user.userId }, key);
    return { userId: user.userId as string, jwt: signedIn.jwt as string };
  }, progress);
  return { appId: app.id as string, apiKey: key, users: created, accessToken: account.accessToken as string };
}

/** Group chats, each created by its first member with the others; returns the chat ids. */
export async function createGroups(nodeUrl: string, groups: ChatUser[][]): Promise<string[]> {
  return inParallel(groups.length, 8, async (i) => {
    const [owner, ...others] = groups[i]!;
    const chat = await call(`${nodeUrl}/api/chats`, { type: 'group', name: `bench ${i}`, memberIds: others.map((u) => u.userId) }, owner!.jwt);
    return chat.chatId as string;
  });
}

/**
 * The environment the service runs with in a benchmark: the per-user and per-connection rate
 * limits raised out of the way (a benchmark user sends far more than a person) and long user JWTs.
 * Everything else is the default a user gets from `npm start`.
 */
export const BENCH_ENV: Record<string, string> = {
  USER_SENDS_PER_SECOND: '10000000',
  USER_WRITES_PER_SECOND: '10000000',
  API_KEY_REQUESTS_PER_SECOND: '10000000',
  APP_ACTIONS_PER_SECOND: '10000000',
  // Benchmark applications are DEMO, whose ceiling of concurrent users would stop the load at 100.
  DEMO_MAX_CONCURRENT_USERS: '10000000',
  USER_REQUESTS_PER_SECOND: '10000000',
  WS_ACTIONS_PER_SECOND: '10000000',
  LOGIN_MAX_PER_ADDRESS: '1000000',
  USER_JWT_TTL_SECONDS: '86400',
};

/** A JSON POST as a signed-in user: its status and parsed body. */
export async function postJson(url: string, body: unknown, jwt: string): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}
