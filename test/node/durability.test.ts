import t from 'tap';
import { integration, startService, WsClient } from '../helpers/index.ts';

t.test('kill -9 right after acks: every acked message, edit, reaction and read mark survives', async (t) => {
  const env = { USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', WS_ACTIONS_PER_SECOND: '100000', USER_REQUESTS_PER_SECOND: '100000' };
  const svc = await startService(env);
  let current = svc;
  t.teardown(() => current.stop());
  const it = await integration(svc);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chat = await it.node.post('/api/chats', { type: 'group', name: 'durable', memberIds: [bob.userId] }, alice.jwt);
  const chatId = chat.body.chatId as string;
  const ws = await WsClient.connect(svc.nodeUrl, alice.jwt);

  // Many sends in flight at once (16), so acks come from group commits of several messages.
  const acks = await ws.sendAll(chatId, Array.from({ length: 200 }, (_, i) => `m${i}`));
  t.ok(acks.every((a) => a.type === 'ack'), 'all sends acked');
  const first = acks[0]!.result.message;
  const edited = await ws.request({ type: 'message.edit', chatId, messageId: first.messageId, content: 'edited' });
  const reacted = await ws.request({ type: 'reaction.add', chatId, messageId: acks[1]!.result.message.messageId, reaction: '👍' });
  const deleted = await ws.request({ type: 'message.delete', chatId, messageId: acks[2]!.result.message.messageId });
  const bobWs = await WsClient.connect(svc.nodeUrl, bob.jwt);
  const read = await bobWs.request({ type: 'read.mark', chatId, seq: 150 });
  t.same([edited.type, reacted.type, deleted.type, read.type], ['ack', 'ack', 'ack', 'ack']);
  await svc.kill();

  current = await startService(env, svc.dataDir);
  const node = current.nodeUrl;
  const history: { messageId: string; seq: number; content: string; edited: boolean; deleted: boolean; reactions: { reaction: string }[] }[] = [];
  let cursor = '';
  for (;;) {
    const page = await fetch(`${node}/api/messages/getMessages/${chatId}?size=100&lastMessage=${cursor}`, { headers: { authorization: `Bearer ${alice.jwt}` } });
    t.equal(page.status, 200);
    const body = (await page.json()) as { messages: typeof history };
    if (body.messages.length === 0) break;
    history.push(...body.messages);
    cursor = body.messages.at(-1)!.messageId;
  }
  const byId = new Map(history.map((m) => [m.messageId, m]));
  t.equal(history.length, 200, 'every acked message is there');
  t.ok(acks.every((a) => byId.get(a.result.message.messageId)?.seq === a.result.message.seq), 'with the seq it was acked with');
  t.equal(byId.get(first.messageId)?.content, 'edited');
  t.equal(byId.get(first.messageId)?.edited, true);
  t.same(byId.get(acks[1]!.result.message.messageId)?.reactions.map((r) => r.reaction), ['👍']);
  t.equal(byId.get(acks[2]!.result.message.messageId)?.deleted, true);
  const bobChats = await fetch(`${node}/api/chats/${chatId}`, { headers: { authorization: `Bearer ${bob.jwt}` } });
  const summary = (await bobChats.json()) as { readSeq: number; unreadCount: number };
  t.equal(summary.readSeq, 150, "bob's read mark survived");
  t.equal(summary.unreadCount, 50);

  // Numbering continues after the crash: no seq is assigned twice.
  const after = await fetch(`${node}/api/messages/${chatId}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.jwt}`, 'content-type': 'application/json' },
    body: JSON.stringify({ content: 'after restart' }),
  });
  t.equal(((await after.json()) as { message: { seq: number } }).message.seq, 201);
});

t.test('a send retried with the same idempotency key makes one message and the same ack', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chat = await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt);
  const chatId = chat.body.chatId as string;

  const ws = await WsClient.connect(svc.nodeUrl, alice.jwt);
  t.teardown(() => ws.close());
  // Concurrent duplicates (a retry racing the original) and a later retry.
  const [a1, a2] = await Promise.all([
    ws.request({ type: 'message.send', chatId, content: 'once', idempotencyKey: 'ws-key' }),
    ws.request({ type: 'message.send', chatId, content: 'once', idempotencyKey: 'ws-key' }),
  ]);
  const a3 = await ws.request({ type: 'message.send', chatId, content: 'once', idempotencyKey: 'ws-key' });
  // Many duplicates at once over both transports, racing one original.
  const storm = await Promise.all([
    ...Array.from({ length: 10 }, () => ws.request({ type: 'message.send', chatId, content: 'storm', idempotencyKey: 'storm-key' })),
    ...Array.from({ length: 10 }, () => it.node.call('POST', `/api/messages/${chatId}`, { body: { content: 'storm' }, token: alice.jwt, headers: { 'idempotency-key': 'storm-key' } })),
  ]);
  const stormIds = storm.map((r) => ('result' in r ? r.result.message.messageId : r.body.message.messageId));
  t.equal(new Set(stormIds).size, 1, 'twenty racing duplicates make one message');
  t.equal(a1.result.message.messageId, a2.result.message.messageId);
  t.equal(a1.result.message.messageId, a3.result.message.messageId);
  t.same(a3.result.message, a1.result.message, 'the same ack');

  const send = () => it.node.call('POST', `/api/messages/${chatId}`, { body: { content: 'http once' }, token: alice.jwt, headers: { 'idempotency-key': 'http-key' } });
  const h1 = await send();
  const h2 = await send();
  t.equal(h1.status, 201);
  t.equal(h2.status, 200, 'the retry is answered 200 with the first message');
  t.same(h2.body.message, h1.body.message);

  const history = await it.node.get(`/api/messages/getMessages/${chatId}`, alice.jwt);
  t.equal(history.body.messages.length, 3, 'one message per key');
  // The same key from another sender is another message.
  const fromBob = await it.node.call('POST', `/api/messages/${chatId}`, { body: { content: 'bob' }, token: bob.jwt, headers: { 'idempotency-key': 'http-key' } });
  t.equal(fromBob.status, 201);
});

t.test('kill -9 right after acks: every acked message is found by search after the restart', async (t) => {
  const env = { USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', WS_ACTIONS_PER_SECOND: '100000', USER_REQUESTS_PER_SECOND: '100000' };
  const svc = await startService(env);
  let current = svc;
  t.teardown(() => current.stop());
  const it = await integration(svc);
  const alice = await it.user('alice');
  const chat = await it.node.post('/api/chats', { type: 'group', name: 'searchable', memberIds: [] }, alice.jwt);
  const chatId = chat.body.chatId as string;
  const ws = await WsClient.connect(svc.nodeUrl, alice.jwt);
  // The embedded store indexes a moment after the ack (README, "Search"): the kill comes first for
  // the last of these, whose pending records the restarted node must index.
  const acks = await ws.sendAll(chatId, Array.from({ length: 300 }, (_, i) => `durable needle${i}`));
  t.ok(acks.every((a) => a.type === 'ack'), 'all sends acked');
  const edit = await ws.request({ type: 'message.edit', chatId, messageId: acks[0]!.result.message.messageId, content: 'durable rewritten' });
  t.equal(edit.type, 'ack');
  await svc.kill();

  current = await startService(env, svc.dataDir);
  const node = current.nodeUrl;
  const search = async (q: string, cursor?: string) => {
    const r = await fetch(`${node}/api/search/messages?${new URLSearchParams({ q, size: '50', ...(cursor ? { cursor } : {}) })}`, { headers: { authorization: `Bearer ${alice.jwt}` } });
    t.equal(r.status, 200);
    return (await r.json()) as { hits: { message: { messageId: string; content: string } }[]; nextCursor?: string };
  };
  const found: string[] = [];
  for (let cursor: string | undefined; ; ) {
    const page = await search('durable', cursor);
    found.push(...page.hits.map((h) => h.message.messageId));
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  t.same(found, acks.map((a) => a.result.message.messageId).reverse(), 'every acked message, once, newest first');
  const last = acks.at(-1)!.result.message;
  t.same((await search('needle299')).hits.map((h) => h.message.messageId), [last.messageId], 'the last one acked, by its own word');
  t.same((await search('rewritten')).hits.map((h) => h.message.content), ['durable rewritten'], 'the edit acked last');
});
