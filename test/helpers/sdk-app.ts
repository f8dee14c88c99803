import type { Test } from 'tap';
import WebSocket from 'ws';
import { ChatClient, type WebSocketConstructor } from 'chat-service/client';
import { ChatServer } from 'chat-service/server';
import { ManagementClient } from 'chat-service/management';
import { removeDir, startService, type Running } from '../../bin/spawn.ts';

const WS = WebSocket as unknown as WebSocketConstructor;

/**
 * A whole service for an SDK suite, stopped when the file ends, and an application on it set up
 * through the SDK itself: a dashboard account, the application, an API key and its ChatServer.
 */
export async function sdkApp(t: Test, name: string, env: Record<string, string> = {}) {
  const svc: Running = await startService(env);
  t.teardown(async () => {
    await svc.stop();
    removeDir(svc.dataDir);
  });
  const owner = new ManagementClient({ baseUrl: svc.controlUrl });
  await owner.register({ companyName: name, email: `${name.replaceAll(' ', '-')}-${process.pid}-${Date.now()}@example.com`, password: 'sdk-suite-password-1' });
  const app = await owner.getApplication((await owner.createApplication(name)).id);
  const endpoint = app.clusterEndpoint!;
  const server = new ChatServer({ baseUrl: endpoint, apiKey: (await owner.createApiKey(app.id)).token });
  return {
    svc,
    endpoint,
    server,
    /** A connected ChatClient signed in as `userId`, closed when `test` ends. */
    async client(test: Test, userId: string): Promise<ChatClient> {
      const c = new ChatClient({ baseUrl: endpoint, WebSocket: WS });
      c.setAuth(await server.signIn({ userId }));
      test.teardown(() => c.close());
      await c.connect();
      return c;
    },
  };
}
