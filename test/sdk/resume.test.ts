import { build } from 'esbuild';
import t from 'tap';
import WebSocket from 'ws';
import { ChatClient, exponentialBackoff, type ServerEvent, type WebSocketConstructor } from 'chat-service/client';
import { ChatServer } from 'chat-service/server';
import { ManagementClient } from 'chat-service/management';
import { startService, type Running } from '../helpers/index.ts';

/**
 * A WebSocket for the client under test whose connections the test can cut, and refuse while the
 * gate is shut: a disconnection of exactly the length the test wants, with no timing involved.
 */
function gatedWebSocket() {
  const gate = { open: true, current: undefined as WebSocket | undefined };
  class Gated extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      // A shut gate sends the attempt to a port nothing listens on: refused at once.
      super(gate.open ? url : 'ws://127.0.0.1:9/', protocols);
      gate.current = this;
    }
  }
  return { gate, WS: Gated as unknown as WebSocketConstructor };
}

async function setup(svc: Running) {
  const mgmt = new ManagementClient({ baseUrl: svc.controlUrl });
  await mgmt.register({ companyName: 'SDK resume', email: `sdk-resume-${process.pid}-${Date.now()}@example.com`, password: 'sdk-password-1' });
  const app = await mgmt.createApplication('sdk resume');
  const key = await mgmt.createApiKey(app.id);
  const endpoint = (await mgmt.getApplication(app.id)).clusterEndpoint!;
  return { endpoint, server: new ChatServer({ baseUrl: endpoint, apiKey: key.token }) };
}

const messagesOf = (events: ServerEvent[], chatId: string) =>
  events.flatMap((e) => (e.type === 'message.new' && e.chatId === chatId ? [{ seq: e.seq, content: e.message.content }] : []));

/** Resolves once `count` events pass `test`, or rejects after `ms`. */
function collect(client: ChatClient, test: (e: ServerEvent) => boolean, count: number, ms = 20_000): Promise<ServerEvent[]> {
  const got: ServerEvent[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => (off(), reject(new Error(`got ${got.length} of ${count} events`))), ms);
    const off = client.on('*', (e) => {
      if (!test(e)) return;
      got.push(e);
      if (got.length === count) (clearTimeout(timer), off(), resolve(got));
    });
  });
}

t.test('realtime resume', async (t) => {
  const svc = await startService({ USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', WS_ACTIONS_PER_SECOND: '100000', USER_REQUESTS_PER_SECOND: '100000' });
  t.teardown(() => svc.stop());
  const { endpoint, server } = await setup(svc);
  const [alice, bob] = [await server.registerUser({ username: 'alice' }), await server.registerUser({ username: 'bob' })];
  const bobClient = new ChatClient({ baseUrl: endpoint });
  bobClient.setAuth(await server.signIn({ userId: bob.userId }));

  const fast = { delay: () => 50 };
  const { gate, WS } = gatedWebSocket();
  const aliceClient = new ChatClient({ baseUrl: endpoint, WebSocket: WS, reconnect: fast, actionTimeoutMs: 30_000 });
  aliceClient.setAuth(await server.signIn({ userId: alice.userId }));
  t.teardown(() => aliceClient.close());
  const events: ServerEvent[] = [];
  aliceClient.on('*', (e) => events.push(e));

  /** Cuts alice off and keeps her off while `during` runs, then lets her back in. */
  async function whileAliceIsAway(during: () => Promise<void>) {
    gate.open = false;
    const away = new Promise<void>((resolve) => {
      const off = aliceClient.on('status', (s) => s === 'reconnecting' && (off(), resolve()));
    });
    gate.current!.terminate();
    await away;
    await during();
    gate.open = true;
  }

  await t.test('a chat the app only read over REST is resumed too: nothing sent while away is missed', async (t) => {
    // The chat and its first messages exist before alice connects, so she has seen none of them live.
    const chat = await bobClient.directChat(alice.userId);
    for (let i = 1; i <= 3; i++) await bobClient.send(chat.chatId, `early ${i}`);
    await aliceClient.connect();
    const page = await aliceClient.getMessages(chat.chatId);
    t.same(page.map((m) => m.seq), [3, 2, 1], 'alice reads the history over REST');
    t.equal(aliceClient.realtime.seen(chat.chatId), 3, 'and realtime follows the chat from there');

    const missed = collect(aliceClient, (e) => e.type === 'message.new' && e.chatId === chat.chatId, 2);
    await whileAliceIsAway(async () => {
      await bobClient.send(chat.chatId, 'while away 1');
      await bobClient.send(chat.chatId, 'while away 2');
    });
    const got = await missed;
    t.same(messagesOf(got, chat.chatId), [{ seq: 4, content: 'while away 1' }, { seq: 5, content: 'while away 2' }], 'both, in order');
    const marker = collect(aliceClient, (e) => e.type === 'message.new' && e.chatId === chat.chatId, 1);
    await bobClient.send(chat.chatId, 'after');
    await marker;
    t.same(messagesOf(events, chat.chatId).map((m) => m.seq), [4, 5, 6], 'each exactly once, nothing replayed twice');
  });

  await t.test('edits, deletions and reactions to messages already seen arrive as message.updated after a reconnect', async (t) => {
    const chat = await bobClient.createGroup('changes', [alice.userId]);
    const live = collect(aliceClient, (e) => e.type === 'message.new' && e.chatId === chat.chatId, 3);
    const sent: { messageId: string }[] = [];
    for (let i = 0; i < 3; i++) sent.push(await bobClient.send(chat.chatId, `original ${i}`));
    await live;
    const updated = collect(aliceClient, (e) => e.type === 'message.updated' && e.chatId === chat.chatId, 2);
    await whileAliceIsAway(async () => {
      await bobClient.edit(chat.chatId, sent[0]!.messageId, 'edited while away');
      await bobClient.react(chat.chatId, sent[0]!.messageId, '🎉');
      await bobClient.deleteMessage(chat.chatId, sent[2]!.messageId);
    });
    const got = (await updated).flatMap((e) => (e.type === 'message.updated' ? [e.message] : []));
    t.match(got, [
      { messageId: sent[0]!.messageId, content: 'edited while away', edited: true, reactions: [{ reaction: '🎉' }] },
      { messageId: sent[2]!.messageId, deleted: true },
    ], 'each changed message once, in its current state');
    const marker = collect(aliceClient, (e) => e.type === 'message.new' && e.chatId === chat.chatId, 1);
    await bobClient.send(chat.chatId, 'after');
    await marker;
    t.equal(events.filter((e) => e.type === 'message.updated' && e.chatId === chat.chatId).length, 2, 'nothing replayed twice');
  });

  await t.test('a gap larger than the server replays is paged from history, once each and in order', async (t) => {
    const chat = await bobClient.createGroup('busy', [alice.userId]);
    const first = collect(aliceClient, (e) => e.type === 'message.new' && e.chatId === chat.chatId, 1);
    await bobClient.send(chat.chatId, 'seen live');
    await first;
    const total = 600;
    const missed = collect(aliceClient, (e) => e.type === 'message.new' && e.chatId === chat.chatId, total, 60_000);
    await whileAliceIsAway(async () => {
      // In sequence, so content i has seq i + 1.
      for (let i = 0; i < total; i++) await bobClient.send(chat.chatId, `missed ${i}`);
    });
    const got = messagesOf(await missed, chat.chatId);
    t.equal(got.length, total, `all ${total} arrive`);
    t.same(got.map((m) => m.seq), Array.from({ length: total }, (_, i) => i + 2), 'in seq order, no gap, no duplicate');
    t.ok(got.every((m) => m.content === `missed ${m.seq - 2}`), 'each with its content');
    t.ok(events.some((e) => e.type === 'message.new' && e.chatId === chat.chatId && e.replay), 'delivered as replays');
  });

  await t.test('a thread open on the connection: its replies arrive live, are replayed once after a reconnect, which opens it again', async (t) => {
    const chat = await bobClient.createGroup('open thread', [alice.userId]);
    const parent = await bobClient.send(chat.chatId, 'plan');
    await aliceClient.getMessages(chat.chatId);
    const replies = () => events.flatMap((e) => (e.type === 'thread.reply' && e.parentId === parent.messageId ? [e.message.content] : []));
    // Alice follows nothing: a reply reaches her only with the thread open.
    const first = collect(aliceClient, (e) => e.type === 'thread.updated' && e.parentId === parent.messageId, 1);
    await bobClient.send(chat.chatId, 'unseen', { parentId: parent.messageId });
    await first;
    t.same(replies(), [], 'not open, not followed: only the summary');
    t.match(await aliceClient.threads.open(chat.chatId, parent.messageId), { following: false, lastSeq: 1 }, 'open: her state in it');
    const live = collect(aliceClient, (e) => e.type === 'thread.reply' && e.parentId === parent.messageId, 1);
    await bobClient.send(chat.chatId, 'r2', { parentId: parent.messageId });
    await live;
    const missed = collect(aliceClient, (e) => e.type === 'thread.reply' && e.parentId === parent.messageId, 2);
    await whileAliceIsAway(async () => {
      await bobClient.send(chat.chatId, 'r3 while away', { parentId: parent.messageId });
    });
    // Then live again, on the new connection, without opening it by hand.
    await collect(aliceClient, (e) => e.type === 'thread.reply' && e.message.content === 'r3 while away', 1).catch(() => undefined);
    await bobClient.send(chat.chatId, 'r4', { parentId: parent.messageId });
    await missed;
    t.same(replies(), ['r2', 'r3 while away', 'r4'], 'r2 live, r3 replayed, r4 live on the reconnected socket: each once');
    await aliceClient.threads.close(chat.chatId, parent.messageId);
    const summary = collect(aliceClient, (e) => e.type === 'thread.updated' && e.thread.replyCount === 5, 1);
    await bobClient.send(chat.chatId, 'r5', { parentId: parent.messageId });
    await summary;
    const after = collect(aliceClient, (e) => e.type === 'message.new' && e.chatId === chat.chatId, 1);
    await bobClient.send(chat.chatId, 'marker');
    await after;
    t.same(replies(), ['r2', 'r3 while away', 'r4'], 'closed: r5 does not come');
  });

  await t.test('connect() called twice while connecting settles both calls', async (t) => {
    const client = new ChatClient({ baseUrl: endpoint, WebSocket: WebSocket as unknown as WebSocketConstructor });
    client.setAuth(await server.signIn({ userId: bob.userId }));
    t.teardown(() => client.close());
    await Promise.all([client.connect(), client.connect()]);
    t.equal(client.realtime.status, 'open');
  });
});

t.test('the default reconnect policy backs off exponentially with ±50% jitter, capped', async (t) => {
  const policy = exponentialBackoff(250, 10_000, 0.5);
  for (let attempt = 0; attempt < 12; attempt++) {
    const base = Math.min(10_000, 250 * 2 ** attempt);
    const delays = Array.from({ length: 200 }, () => policy.delay(attempt));
    t.ok(delays.every((d) => d >= base * 0.5 && d <= base * 1.5), `attempt ${attempt}: within ±50% of ${base} ms`);
    t.ok(new Set(delays).size > 20, `attempt ${attempt}: jittered`);
  }
});

t.test('the published client entry bundles for the browser with no Node built-in', async (t) => {
  const entry = new URL('../../sdk/dist/client.js', import.meta.url).pathname;
  const result = await build({ entryPoints: [entry], bundle: true, platform: 'browser', format: 'esm', write: false, metafile: true, logLevel: 'silent' });
  t.same(result.errors, []);
  const inputs = Object.keys(result.metafile.inputs);
  t.ok(inputs.some((p) => p.includes('sdk/dist/client.js')), 'the entry is in the bundle');
  t.same(inputs.filter((p) => p.startsWith('node:') || /^(fs|net|tls|http|https|crypto|stream|buffer|ws)$/.test(p)), [], 'no Node-only module');
});
