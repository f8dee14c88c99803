import { client, newAccount } from './http.ts';
import type { Running } from '../../bin/spawn.ts';

export interface ChatUserSession {
  userId: string;
  username: string;
  jwt: string;
  refreshToken: string;
}

/**
 * An integrator's setup on a running service: a dashboard account, an application, an API key,
 * and helpers that act as the integrator's backend (API key) and as signed-in users (JWT).
 */
export async function integration(svc: Running, prefix = 'app') {
  const control = client(svc.controlUrl);
  const node = client(svc.nodeUrl);
  const reg = await control.post('/api/auth/register', newAccount(prefix));
  if (reg.status !== 201) throw new Error(`register failed: ${reg.text}`);
  const accessToken = reg.body.accessToken as string;
  const app = await control.post('/api/client/apps', { name: `${prefix} app` }, accessToken);
  const key = await control.post(`/api/client/apps/${app.body.id}/keys`, undefined, accessToken);
  if (key.status !== 201) throw new Error(`key failed: ${key.text}`);
  const apiKey = key.body.token as string;
  let n = 0;
  return {
    appId: app.body.id as string,
    apiKey,
    keyId: key.body.id as string,
    accessToken,
    control,
    node,
    /** Registers and signs in a chat user through the API key (the integrator's backend). */
    async user(name = `u${++n}`): Promise<ChatUserSession> {
      const username = `${name}-${process.pid}-${n}`;
      const created = await node.post('/api/users', { username }, apiKey);
      if (created.status !== 201) throw new Error(`registerUser failed: ${created.text}`);
      const signed = await node.post('/api/users/signin', { userId: created.body.userId }, apiKey);
      if (signed.status !== 200) throw new Error(`signIn failed: ${signed.text}`);
      return { userId: created.body.userId, username, jwt: signed.body.jwt, refreshToken: signed.body.refreshToken };
    },
    /**
     * The application's stored attachment bytes as its usage shows them, once they are `want`
     * (nodes flush usage every USAGE_FLUSH_SECONDS), asked every 250 ms for at most 10 s.
     */
    async storedFileBytes(want: number): Promise<unknown> {
      let got: unknown;
      for (const until = Date.now() + 10_000; Date.now() < until; await new Promise((r) => setTimeout(r, 250))) {
        got = (await control.get(`/api/client/apps/${app.body.id}/usage`, accessToken)).body.storedFileBytes;
        if (got === want) break;
      }
      return got;
    },
  };
}
