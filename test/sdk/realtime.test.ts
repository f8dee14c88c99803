import t from 'tap';
import WebSocket from 'ws';
import { ChatClient, exponentialBackoff, type ServerEvent, type WebSocketConstructor } from 'chat-service/client';
import { ChatServer } from 'chat-service/server';
import { ManagementClient } from 'chat-service/management';
import { freePort, startService, type Running } from '../helpers/index.ts';

const WS = WebSocket as unknown as WebSocketConstructor;

async function setup(svc: Running) {
  const mgmt = new ManagementClient({ baseUrl: svc.controlUrl });
  await mgmt.register({ companyName: 'SDK test', email: `sdk-${process.pid}-${Date.now()}@example.com`, password: 'sdk-password-1' });
  const app = await mgmt.createApplication('sdk');
  const key = await mgmt.createApiKey(app.id);
  const endpoint = (await mgmt.getApplication(app.id)).clusterEndpoint!;
  const server = new ChatServer({ baseUrl: endpoint, apiKey: key.token });
  return { mgmt, app, key, endpoint, server };
}

t.test('two clients chat through a server restart with nothing lost or duplicated', async (t) => {
  const env = { USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', WS_ACTIONS_PER_SECOND: '100000', CONTROL_PORT: String(await freePort()), NODE_PORT: String(await freePort()) };
  let svc = await startService(env);
  t.teardown(() => svc.stop());
  const { server, endpoint } = await setup(svc);
  const [alice, bob] = [await server.registerUser({ username: 'alice' }), await server.registerUser({ username: 'bob' })];
  // What is tested is that nothing is lost or doubled, not how fast a restart is: the sends queued
  // while the service is down wait for it however long a loaded machine takes to start it, and the
  // clients retry often enough to find it soon after.
  const patient = { actionTimeoutMs: 120_000, reconnect: exponentialBackoff(100, 1000) };
  const clientA = new ChatClient({ baseUrl: endpoint, WebSocket: WS, ...patient });
  const clientB = new ChatClient({ baseUrl: endpoint, WebSocket: WS, encoding: 'msgpack', ...patient });
  clientA.setAuth(await server.signIn({ userId: alice.userId }));
  clientB.setAuth(await server.signIn({ username: 'bob' }));
  t.teardown(() => (clientA.close(), clientB.close()));
  await Promise.all([clientA.connect(), clientB.connect()]);
  const chat = await clientA.directChat(bob.userId);
  const receivedByB: ServerEvent[] = [];
  clientB.on('message.new', (e) => receivedByB.push(e));
  const statuses: string[] = [];
  clientA.on('status', (s) => statuses.push(s));

  const sent: string[] = [];
  for (let i = 0; i < 20; i++) sent.push((await clientA.send(chat.chatId, `before ${i}`)).messageId);

  // Restart the service on the same ports while sends are queued and in flight.
  await svc.kill();
  const inFlight = Array.from({ length: 20 }, (_, i) => clientA.send(chat.chatId, `during ${i}`));
  svc = await startService(env, svc.dataDir);
  for (const m of await Promise.all(inFlight)) sent.push(m.messageId);
  for (let i = 0; i < 20; i++) sent.push((await clientA.send(chat.chatId, `after ${i}`)).messageId);

  // Bob's sixtieth message, or 30 s: the assertions below say what was missing.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, 30_000);
    const off = clientB.on('message.new', () => receivedByB.length >= 60 && done());
    function done() {
      clearTimeout(timer);
      off();
      resolve();
    }
    if (receivedByB.length >= 60) done();
  });
  const ids = receivedByB.map((e) => (e.type === 'message.new' ? e.message.messageId : ''));
  t.equal(new Set(sent).size, 60, 'sixty distinct messages acknowledged');
  t.same(new Set(ids), new Set(sent), 'bob received every one');
  t.equal(ids.length, 60, 'and none twice');
  const seqs = receivedByB.map((e) => (e.type === 'message.new' ? e.seq : 0));
  t.same(seqs, [...seqs].sort((a, b) => a - b), 'in seq order');
  t.ok(statuses.includes('reconnecting') && statuses.at(-1) === 'open', `status went through reconnecting back to open (${statuses.join(' → ')})`);
  const history: string[] = [];
  for await (const page of clientB.history(chat.chatId, 25)) history.push(...page.map((m) => m.messageId));
  t.equal(history.length, 60, 'history holds exactly the sixty');
});

t.test('marking every incoming message read stays within the write budget: read marks of a chat are coalesced', async (t) => {
  const svc = await startService({ USER_WRITES_PER_SECOND: '3', USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', WS_ACTIONS_PER_SECOND: '100000' });
  t.teardown(() => svc.stop());
  const { server, endpoint } = await setup(svc);
  const [alice, bob] = [await server.registerUser({ username: 'alice' }), await server.registerUser({ username: 'bob' })];
  const clientA = new ChatClient({ baseUrl: endpoint, WebSocket: WS });
  const clientB = new ChatClient({ baseUrl: endpoint, WebSocket: WS });
  clientA.setAuth(await server.signIn({ userId: alice.userId }));
  clientB.setAuth(await server.signIn({ userId: bob.userId }));
  t.teardown(() => (clientA.close(), clientB.close()));
  await Promise.all([clientA.connect(), clientB.connect()]);
  const chat = await clientA.directChat(bob.userId);
  for (let i = 0; i < 30; i++) await clientA.send(chat.chatId, `m${i}`);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  // Thirty marks at once, as a client marking each message as it arrives would make them.
  const marks = await Promise.all(Array.from({ length: 30 }, (_, i) => clientB.markRead(chat.chatId, i + 1)));
  t.equal(marks.length, 30, 'every call resolves (none refused RATE_LIMITED)');
  t.equal(Math.max(...marks), 30, 'the highest mark is stored');
  t.ok(marks.every((m, i) => m >= i + 1), 'each resolves with a mark at least as high as it asked for');
});

t.test('closed with 4029 for ignoring retry hints, the client waits the retryAfter it was given before reconnecting', async (t) => {
  const svc = await startService({ WS_ACTIONS_PER_SECOND: '5', USER_TYPING_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000' });
  t.teardown(() => svc.stop());
  const { server, endpoint } = await setup(svc);
  const [ann, ben] = [await server.registerUser({ username: 'ann' }), await server.registerUser({ username: 'ben' })];
  let sockets = 0;
  const Counting = class extends WebSocket {
    constructor(...args: ConstructorParameters<typeof WebSocket>) {
      super(...args);
      sockets++;
    }
  } as unknown as WebSocketConstructor;
  const client = new ChatClient({ baseUrl: endpoint, WebSocket: Counting });
  client.setAuth(await server.signIn({ userId: ann.userId }));
  t.teardown(() => client.close());
  await client.connect();
  const chat = await client.directChat(ben.userId);
  const statuses: string[] = [];
  client.on('status', (s) => statuses.push(s));
  // An application that types on every keystroke and ignores the refusals: 100 a second against 5.
  const until = Date.now() + 5000;
  while (!statuses.includes('reconnecting') && Date.now() < until) {
    client.typing(chat.chatId, true).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  t.ok(statuses.includes('reconnecting'), 'the server closed the socket');
  t.equal(sockets, 1, 'one socket so far');
  // The close said retryAfter 30: a client on its backoff policy would have tried 3 times by now.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  t.equal(sockets, 1, 'no reconnect attempt within the 30 s it was told to wait');
  t.equal(statuses.at(-1), 'reconnecting', 'still waiting to reconnect');
});
