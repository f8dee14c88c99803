import t from 'tap';
import WebSocket from 'ws';
import { ChatApiError, ChatClient, isRetryable, RETRYABLE_CODES, type WebSocketConstructor } from 'chat-service/client';
import { ChatServer } from 'chat-service/server';
import { ManagementClient } from 'chat-service/management';
import { errorCodes } from '../../common/index.ts';
import { freePort, startService } from '../helpers/index.ts';

const WS = WebSocket as unknown as WebSocketConstructor;

/** The settled outcomes of `n` sends started at once. */
async function burst(client: ChatClient, chatId: string, n: number): Promise<PromiseSettledResult<unknown>[]> {
  return Promise.allSettled(Array.from({ length: n }, (_, i) => client.send(chatId, `burst ${i}`)));
}

const refusals = (results: PromiseSettledResult<unknown>[]) =>
  results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown);

/** Waits as long as the refusals asked: the longest `retryAfterMs` among them. */
const waitAsAsked = (errors: unknown[]) => new Promise((r) => setTimeout(r, Math.max(0, ...errors.map((e) => (e as ChatApiError).retryAfterMs ?? 0))));

t.test('the SDK tells which errors are worth retrying, and after how long, over REST and WebSocket', async (t) => {
  const svc = await startService({ USER_SENDS_PER_SECOND: '2', CONTROL_PORT: String(await freePort()), NODE_PORT: String(await freePort()) });
  t.teardown(() => svc.stop());
  const mgmt = new ManagementClient({ baseUrl: svc.controlUrl });
  await mgmt.register({ companyName: 'SDK errors', email: `sdk-errors-${process.pid}-${Date.now()}@example.com`, password: 'sdk-password-1' });
  const app = await mgmt.createApplication('errors');
  const key = await mgmt.createApiKey(app.id);
  const endpoint = (await mgmt.getApplication(app.id)).clusterEndpoint!;
  const server = new ChatServer({ baseUrl: endpoint, apiKey: key.token });
  const [alice, bob] = [await server.registerUser({ username: 'alice' }), await server.registerUser({ username: 'bob' })];
  const client = new ChatClient({ baseUrl: endpoint, WebSocket: WS });
  client.setAuth(await server.signIn({ userId: alice.userId }));
  t.teardown(() => client.close());
  const chat = await client.directChat(bob.userId);

  // Over REST (not connected): a 429 carries Retry-After, in whole seconds.
  const overRest = refusals(await burst(client, chat.chatId, 8));
  t.ok(overRest.length > 0, `some REST sends were refused (${overRest.length} of 8)`);
  for (const e of overRest) {
    t.ok(e instanceof ChatApiError, 'a ChatApiError');
    const err = e as ChatApiError;
    t.match(err, { code: 'RATE_LIMITED', status: 429, retryable: true }, 'RATE_LIMITED, retryable');
    t.ok(err.retryAfterMs !== undefined && err.retryAfterMs >= 1000 && err.retryAfterMs % 1000 === 0, `after Retry-After (${err.retryAfterMs} ms)`);
  }

  // Over WebSocket, once the wait the REST refusals asked for is over: sends are taken again, and
  // the rest are refused with the error frame's retryAfter.
  await waitAsAsked(overRest);
  await client.connect();
  const overSocket = refusals(await burst(client, chat.chatId, 8));
  t.ok(overSocket.length > 0 && overSocket.length < 8, `after the wait some WebSocket sends were taken, and some refused (${overSocket.length} of 8)`);
  for (const e of overSocket) {
    const err = e as ChatApiError;
    t.match(err, { code: 'RATE_LIMITED', retryable: true }, 'RATE_LIMITED, retryable');
    t.ok(err.retryAfterMs !== undefined && err.retryAfterMs >= 1000, `after the frame's retryAfter (${err.retryAfterMs} ms)`);
  }

  // A request the service refuses for what it is: not retryable, and no wait given.
  await waitAsAsked(overSocket);
  const invalid = await client.send(chat.chatId, '').then(
    () => undefined,
    (e: unknown) => e,
  );
  t.match(invalid, { code: 'VALIDATION_FAILED', retryable: false, retryAfterMs: undefined }, 'an empty message: VALIDATION_FAILED, not retryable');
});

t.test("the SDK's retryable codes are the service's", async (t) => {
  const retryable = Object.entries(errorCodes)
    .filter(([, c]) => 'retryable' in c && c.retryable)
    .map(([code]) => code);
  t.same([...RETRYABLE_CODES].sort(), retryable.sort());
  for (const code of Object.keys(errorCodes)) t.equal(isRetryable(code), retryable.includes(code), code);
  t.equal(isRetryable('A_CODE_FROM_A_NEWER_SERVICE'), false, 'an unknown code is not retried');
});
