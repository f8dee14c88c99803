import t from 'tap';
import { integration, startService, WsClient } from '../helpers/index.ts';

const metric = (text: string, name: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'));
  return line === undefined ? NaN : Number(line.split(' ').at(-1));
};

t.test('health, readiness and metrics', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [alice, bob] = [await it.user(), await it.user()];
  const chat = await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt);
  const ws = await WsClient.connect(svc.nodeUrl, alice.jwt);
  t.teardown(() => ws.close());
  const before = (await it.node.get('/metrics')).text;
  await ws.request({ type: 'message.send', chatId: chat.body.chatId, content: 'x' });
  t.equal((await it.node.get('/healthz')).status, 200);
  t.equal((await it.node.get('/readyz')).status, 200);
  const text = (await it.node.get('/metrics')).text;
  t.equal(metric(text, 'chat_ws_connections'), 1);
  t.equal(metric(text, 'chat_messages_in_total'), 1);
  t.equal(metric(text, 'chat_actors'), 1);
  t.equal(metric(text, 'chat_ack_latency_seconds_count'), 1);
  t.equal(metric(text, 'chat_store_write_seconds_count'), 1, 'the one send was one store write');
  t.ok(metric(text, 'chat_events_out_total') >= 1);
  t.equal(metric(text, 'chat_ws_slow_consumers_dropped_total'), 0);
  t.equal(metric(text, 'chat_sends_shed_total'), 0, 'no send shed by the node');
  t.equal(metric(text, 'chat_writes_refused_busy_total'), 0, 'no write refused by a busy chat');
  // What the embedded store's writes cost, and how busy the node's thread was: totals that the send moved on.
  const grew = (name: string) => metric(text, name) - metric(before, name);
  t.ok(metric(before, 'chat_event_loop_busy_seconds_total') > 0, 'the event loop has been busy');
  t.ok(grew('chat_event_loop_busy_seconds_total') > 0, 'and more so after the send');
  t.ok(grew('chat_store_transactions_total') >= 1, 'the send committed at least one transaction');
  t.ok(grew('chat_store_pages_written_total') >= 2, 'which wrote pages (a leaf and the root at least)');
  t.ok(grew('chat_store_transaction_seconds_total') > 0, 'and took time inside the transaction');
});

t.test('a consumer that stops reading is dropped with 4001 and counted, and others are unaffected', async (t) => {
  const svc = await startService({ USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', WS_ACTIONS_PER_SECOND: '100000' });
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [alice, bob, carol] = [await it.user(), await it.user(), await it.user()];
  const chat = await it.node.post('/api/chats', { type: 'group', name: 'firehose', memberIds: [bob.userId, carol.userId] }, alice.jwt);
  const chatId = chat.body.chatId as string;
  const a = await WsClient.connect(svc.nodeUrl, alice.jwt);
  const slow = await WsClient.connect(svc.nodeUrl, bob.jwt);
  const fine = await WsClient.connect(svc.nodeUrl, carol.jwt);
  t.teardown(() => Promise.all([a.close(), fine.close()]));
  slow.socket.pause();
  const content = 'y'.repeat(4000);
  let sent = 0;
  const dropped = async () => metric((await it.node.get('/metrics')).text, 'chat_ws_slow_consumers_dropped_total') >= 1;
  // Bounded: at most 5,000 messages (20 MB), stopping as soon as the server has dropped the socket.
  while (sent < 5000 && !(sent % 200 === 0 && sent > 0 && (await dropped()))) {
    await Promise.all(Array.from({ length: 20 }, () => a.request({ type: 'message.send', chatId, content })));
    sent += 20;
  }
  slow.socket.resume();
  const closed = await slow.waitClosed();
  t.equal(closed.code, 4001, 'closed as a slow consumer');
  t.match(JSON.parse(closed.reason), { reconnect: 'now' });
  const text = (await it.node.get('/metrics')).text;
  t.ok(metric(text, 'chat_ws_slow_consumers_dropped_total') >= 1, 'counted');
  const got = await fine.waitForCount((f) => f.type === 'message.new', sent, 20000);
  t.equal(got.length, sent, 'the reading member got every message');
});

t.test('graceful shutdown: sockets get 4000, in-flight sends finish, acked ones survive', async (t) => {
  const env = { USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', WS_ACTIONS_PER_SECOND: '100000' };
  const svc = await startService(env);
  const it = await integration(svc);
  const [alice, bob] = [await it.user(), await it.user()];
  const chat = await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt);
  const chatId = chat.body.chatId as string;
  const a = await WsClient.connect(svc.nodeUrl, alice.jwt);
  const replies = Array.from({ length: 100 }, (_, i) => a.request({ type: 'message.send', chatId, content: `m${i}` }).catch(() => undefined));
  const stopped = svc.stop();
  const closed = await a.waitClosed();
  await stopped;
  t.equal(closed.code, 4000);
  t.match(JSON.parse(closed.reason), { reconnect: 'now' });
  const acked = (await Promise.all(replies)).filter((r) => r?.type === 'ack');
  const again = await startService(env, svc.dataDir);
  t.teardown(() => again.stop());
  const history = await fetch(`${again.nodeUrl}/api/messages/getMessages/${chatId}?size=100`, { headers: { authorization: `Bearer ${alice.jwt}` } });
  const ids = new Set(((await history.json()) as { messages: { messageId: string }[] }).messages.map((m) => m.messageId));
  t.ok(acked.length > 0, `some sends were acked before the close (${acked.length})`);
  t.ok(acked.every((r) => ids.has(r!.result.message.messageId)), 'every acked message is stored');
});

t.test('a socket lives no longer than its JWT: closed with 4100 once the token expires', async (t) => {
  const svc = await startService({ USER_JWT_TTL_SECONDS: '5' });
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const alice = await it.user();
  const issuedAt = Date.now();
  const ws = await WsClient.connect(svc.nodeUrl, alice.jwt);
  t.same(await ws.request({ type: 'ping' }).then((r) => r.type), 'ack', 'usable while the token is valid');
  const closed = await ws.waitClosed();
  const lived = Date.now() - issuedAt;
  t.equal(closed.code, 4100);
  t.match(JSON.parse(closed.reason), { reconnect: 'after-refresh' });
  t.ok(lived >= 3000 && lived < 8000, `closed around the token's expiry (${lived} ms after sign-in)`);
  const refreshed = await it.node.post('/api/users/refresh', { refreshToken: alice.refreshToken });
  t.equal(refreshed.status, 200);
  const again = await WsClient.connect(svc.nodeUrl, refreshed.body.jwt);
  t.teardown(() => again.close());
  t.equal((await again.request({ type: 'ping' })).type, 'ack', 'a refreshed token connects again');
});
