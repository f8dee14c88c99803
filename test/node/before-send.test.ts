import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { Webhook } from 'standardwebhooks';
import WebSocket from 'ws';
import { ChatApiError, ChatClient, type WebSocketConstructor } from 'chat-service/client';
import { ManagementClient } from 'chat-service/management';
import { assertProblem } from '../helpers/problem.ts';
import { client, fetchHeaders, integration, newAccount, startService, WsClient, type Running } from '../helpers/index.ts';

/*
 * README, "Before-send hook": a node asks the application's hook about each message before it is
 * stored, over REST and WebSocket alike, signed per Standard Webhooks (every call is verified here
 * with its reference library); the hook allows, rejects (MESSAGE_REJECTED) or replaces the content,
 * and a hook that fails is passed (`open`) or refuses the send (`closed`, BEFORE_SEND_FAILED).
 */
const [relaxed, strict] = await Promise.all([startService({ WEBHOOK_ALLOW_INSECURE_URLS: 'true' }), startService()]);
t.teardown(() => Promise.all([relaxed.stop(), strict.stop()]));

interface Call {
  id: string;
  verified: boolean;
  payload: { type: string; id: string; timestamp: string; appId: string; data: Record<string, unknown> };
}

type Answer = (call: Call, res: ServerResponse) => void;
const json = (res: ServerResponse, body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

/**
 * The application's hook on loopback: checks every call's signature with the secret it is given,
 * records it, and answers what `answer` says (a call that does not verify gets 401).
 */
async function hookReceiver(t: Test) {
  const state = { secret: '', answer: ((_c, res) => json(res, { action: 'allow' })) as Answer, calls: [] as Call[] };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      let call: Call;
      try {
        const payload = new Webhook(state.secret).verify(body, req.headers as Record<string, string>) as Call['payload'];
        call = { id: String(req.headers['webhook-id']), verified: true, payload };
      } catch {
        state.calls.push({ id: String(req.headers['webhook-id']), verified: false, payload: JSON.parse(body) as Call['payload'] });
        return res.writeHead(401).end();
      }
      state.calls.push(call);
      state.answer(call, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return Object.assign(state, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/before-send` });
}

/** An application with two users in a direct chat, both connected, and a hook set as `setting` says. */
async function chatWithHook(t: Test, setting: { timeoutMs?: number; failurePolicy?: 'open' | 'closed' } = {}, svc: Running = relaxed) {
  const it = await integration(svc, 'before-send');
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chatId = (await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt)).body.chatId as string;
  const hook = await hookReceiver(t);
  const set = await it.control.put(`/api/client/apps/${it.appId}/before-send`, { url: hook.url, ...setting }, it.accessToken);
  t.equal(set.status, 201, 'the hook is set');
  hook.secret = set.body.secret as string;
  const [a, b] = await Promise.all([WsClient.connect(svc.nodeUrl, alice.jwt), WsClient.connect(svc.nodeUrl, bob.jwt)]);
  t.teardown(() => {
    for (const s of [a, b]) {
      s.dropWaiters();
      s.socket.terminate();
    }
  });
  const rest = (content: string, extra: Record<string, unknown> = {}) => it.node.post(`/api/messages/${chatId}`, { content, ...extra }, alice.jwt);
  const ws = (content: string, extra: Record<string, unknown> = {}) => a.request({ type: 'message.send', chatId, content, ...extra });
  const history = async () => ((await it.node.get(`/api/messages/getMessages/${chatId}`, bob.jwt)).body.messages as { content: string }[]).map((m) => m.content);
  return { it, alice, bob, chatId, hook, a, b, rest, ws, history };
}

t.test('allow: each send is one signed call carrying the message; a stored retry is not asked again', async (t) => {
  const { it, alice, chatId, hook, b, rest, ws, history } = await chatWithHook(t);
  const sent = await rest('hello', { idempotencyKey: 'k1' });
  t.equal(sent.status, 201);
  t.equal(sent.body.message.content, 'hello');
  t.equal(hook.calls.length, 1, 'one call');
  const [call] = hook.calls as [Call];
  t.ok(call.verified, 'the signature verifies with the hook secret (standardwebhooks)');
  t.match(call.payload, { type: 'message.before_send', id: call.id, appId: it.appId, data: { chatId, senderId: alice.userId, content: 'hello', clientKey: 'k1' } }, 'the body names the message; webhook-id is its id');
  t.match(call.payload.timestamp, /^\d{4}-\d\d-\d\dT/);

  const retry = await rest('hello', { idempotencyKey: 'k1' });
  t.equal(retry.status, 200, 'the retry returns the stored message');
  t.equal(hook.calls.length, 1, 'without asking the hook again');

  const ack = await ws('over the socket');
  t.equal(ack.type, 'ack');
  t.equal(ack.result.message.content, 'over the socket');
  t.equal(hook.calls.length, 2, 'WebSocket sends are asked about too');
  t.ok(hook.calls[1]!.verified);
  t.not(hook.calls[1]!.id, call.id, 'every call has its own webhook-id');
  await b.waitFor((f) => f.type === 'message.new' && f.message.content === 'over the socket');
  t.same(await history(), ['over the socket', 'hello']);

  const outsider = await it.user('outsider');
  assertProblem(t, await it.node.post(`/api/messages/${chatId}`, { content: 'let me in' }, outsider.jwt), 404, 'CHAT_NOT_FOUND', 'a non-member');
  t.equal(hook.calls.length, 2, 'a non-member’s send is never shown to the hook');
});

t.test('a send with files: the hook sees each file’s metadata, never its bytes or a URL', async (t) => {
  const { it, alice, chatId, hook, rest } = await chatWithHook(t);
  const pdf = Buffer.from('%PDF-1.4\n%%EOF\n');
  const created = await it.node.post(`/api/chats/${chatId}/uploads`, { name: 'terms.pdf', size: pdf.length, type: 'application/pdf' }, alice.jwt);
  t.equal(created.status, 201, created.text);
  const put = await fetch(created.body.upload.url, { method: 'PUT', headers: fetchHeaders(created.body.upload.headers), body: new Uint8Array(pdf) });
  t.equal(put.status, 200);
  const done = await it.node.post(`/api/chats/${chatId}/uploads/${created.body.uploadId}/finalize`, undefined, alice.jwt);
  t.equal(done.status, 200, done.text);
  const sent = await rest('the terms', { attachments: [done.body.id] });
  t.equal(sent.status, 201, sent.text);
  const call = hook.calls.at(-1)!;
  t.same(call.payload.data.attachments, [{ id: done.body.id, name: 'terms.pdf', size: pdf.length, type: 'application/pdf' }], 'id, name, size and sniffed type');
  t.notOk(JSON.stringify(call.payload).includes('http'), 'no URL to the file');
});

t.test('reject: REST answers 422 MESSAGE_REJECTED with the reason, WebSocket an error frame; nothing is stored', async (t) => {
  const { hook, b, rest, ws, history } = await chatWithHook(t);
  hook.answer = (call, res) => json(res, call.payload.data.content === 'fine' ? { action: 'allow' } : { action: 'reject', reason: 'no shouting, please' });
  const refused = await rest('HEY');
  assertProblem(t, refused, 422, 'MESSAGE_REJECTED', 'REST');
  t.equal(refused.body.detail, 'no shouting, please', 'the detail is the hook’s reason');
  t.same(refused.body.errors, [{ path: '/body/content', message: 'no shouting, please' }], 'and it names the field');

  const frame = await ws('HEY AGAIN', { idempotencyKey: 'w1' });
  t.match(frame, { type: 'error', code: 'MESSAGE_REJECTED', message: 'no shouting, please' }, 'WebSocket: the same code and reason');
  t.equal((await ws('HEY AGAIN', { idempotencyKey: 'w1' })).code, 'MESSAGE_REJECTED', 'a retry of a rejected send is asked again (nothing was stored)');
  t.equal(hook.calls.length, 3);

  hook.answer = (call, res) => json(res, call.payload.data.content === 'fine' ? { action: 'allow' } : { action: 'reject' });
  t.equal((await rest('no reason given')).body.detail, 'the message was rejected', 'a rejection without a reason');

  t.equal((await ws('fine')).type, 'ack');
  await b.waitFor((f) => f.type === 'message.new');
  t.same(await history(), ['fine'], 'only the allowed message was stored');
  t.equal(b.frames.filter((f) => f.type === 'message.new').length, 1, 'and only it was delivered');
  t.ok(hook.calls.every((c) => c.verified));
});

t.test('replace: what is stored, acknowledged and delivered is the replacement', async (t) => {
  const { hook, b, rest, ws, history } = await chatWithHook(t);
  hook.answer = (call, res) => {
    const content = String(call.payload.data.content);
    json(res, content === 'empty me' ? { action: 'replace', content: '' } : content === 'too long' ? { action: 'replace', content: 'x'.repeat(100_000) } : { action: 'replace', content: content.replace('darn', '****') });
  };
  const sent = await rest('oh darn');
  t.equal(sent.status, 201);
  t.equal(sent.body.message.content, 'oh ****', 'REST answers the stored content');
  const ack = await ws('darn it');
  t.equal(ack.result.message.content, '**** it', 'the WebSocket ack too');
  await b.waitForCount((f) => f.type === 'message.new', 2);
  t.same(b.frames.filter((f) => f.type === 'message.new').map((f) => f.message.content), ['oh ****', '**** it'], 'members receive the replacement');

  // A replacement a send could not carry is a failure of the hook: the policy (open here) applies.
  t.equal((await rest('empty me')).body.message.content, 'empty me', 'an empty replacement: stored as sent');
  t.equal((await ws('too long')).result.message.content, 'too long', 'an over-long replacement: stored as sent');
  t.same(await history(), ['too long', 'empty me', '**** it', 'oh ****']);
  t.ok(hook.calls.every((c) => c.verified));
});

t.test('a thread reply is asked about as a send is: the call names its parent, a replacement is what the thread holds, a rejection stores nothing', async (t) => {
  const { it, alice, chatId, hook, rest } = await chatWithHook(t);
  const parent = (await rest('the plan')).body.message;
  hook.answer = (call, res) => {
    const content = String(call.payload.data.content);
    json(res, content.includes('nope') ? { action: 'reject', reason: 'not in threads' } : { action: 'replace', content: content.replace('darn', '****') });
  };
  const replied = await rest('darn good', { parentId: parent.messageId, showInChat: true });
  t.same([replied.status, replied.body.message.content, replied.body.message.parentId], [201, '**** good', parent.messageId], 'the reply is stored as the hook replaced it');
  const call = hook.calls.at(-1)!;
  t.match(call.payload.data, { chatId, senderId: alice.userId, content: 'darn good', parentId: parent.messageId, showInChat: true }, 'the call names the parent and showInChat');
  const refused = await rest('nope', { parentId: parent.messageId });
  t.same([refused.status, refused.body.code], [422, 'MESSAGE_REJECTED'], 'a rejected reply is refused as a send is');
  const thread = (await it.node.get(`/api/chats/${chatId}/threads/${parent.messageId}/messages`, alice.jwt)).body.messages as { content: string }[];
  t.same(thread.map((m) => m.content), ['**** good'], 'the thread holds the replaced reply only');
});

t.test('timeout with policy open: the message is stored as sent, over REST and WebSocket', async (t) => {
  const { hook, b, rest, ws, history } = await chatWithHook(t, { timeoutMs: 100, failurePolicy: 'open' });
  hook.answer = (_c, res) => void setTimeout(() => json(res, { action: 'reject', reason: 'too late' }), 600);
  const started = Date.now();
  const sent = await rest('slow hook');
  t.equal(sent.status, 201);
  t.equal(sent.body.message.content, 'slow hook');
  t.ok(Date.now() - started >= 90, 'the node waited for the hook…');
  t.ok(Date.now() - started < 550, '…no longer than its timeout (and the send)');
  t.equal((await ws('slow again')).type, 'ack');
  await b.waitForCount((f) => f.type === 'message.new', 2);
  t.same(await history(), ['slow again', 'slow hook']);

  for (const failing of [(_c: Call, res: ServerResponse) => res.writeHead(500).end(), (_c: Call, res: ServerResponse) => res.writeHead(200).end('not json'), (_c: Call, res: ServerResponse) => json(res, { action: 'maybe' })]) {
    hook.answer = failing;
    t.equal((await rest('still open')).status, 201, 'a 500, an answer that is not JSON or not a verdict: stored as sent');
  }
  t.equal(hook.calls.length, 5);
});

t.test('timeout with policy closed: BEFORE_SEND_FAILED, over REST and WebSocket, and nothing is stored', async (t) => {
  const { hook, b, rest, ws, history } = await chatWithHook(t, { timeoutMs: 100, failurePolicy: 'closed' });
  hook.answer = (_c, res) => void setTimeout(() => json(res, { action: 'allow' }), 600);
  const refused = await rest('slow hook');
  assertProblem(t, refused, 503, 'BEFORE_SEND_FAILED', 'REST');
  t.notMatch(refused.body.detail, /127\.0\.0\.1/, 'the sender is not told where the hook is');
  t.match(await ws('slow again'), { type: 'error', code: 'BEFORE_SEND_FAILED' }, 'WebSocket: the same code');
  for (const failing of [(_c: Call, res: ServerResponse) => res.writeHead(500).end(), (_c: Call, res: ServerResponse) => res.writeHead(200).end('not json')]) {
    hook.answer = failing;
    assertProblem(t, await rest('closed'), 503, 'BEFORE_SEND_FAILED', 'a 500 or an answer that is not JSON');
  }
  t.same(await history(), [], 'nothing was stored');
  t.equal(b.frames.filter((f) => f.type === 'message.new').length, 0, 'nothing was delivered');

  hook.answer = (_c, res) => json(res, { action: 'allow' });
  t.equal((await rest('on time')).status, 201, 'a hook that answers in time lets it through');
  t.ok(hook.calls.every((c) => c.verified));
});

t.test('a rotated secret signs the next call; a deleted hook is asked no more', async (t) => {
  const { it, hook, rest, ws, history } = await chatWithHook(t, { timeoutMs: 200 });
  const base = `/api/client/apps/${it.appId}/before-send`;
  t.equal((await rest('one')).status, 201);
  const rotated = (await it.control.post(`${base}/secret/rotate`, undefined, it.accessToken)).body.secret as string;
  t.not(rotated, hook.secret);
  const old = hook.secret;
  hook.secret = rotated;
  t.equal((await rest('two')).status, 201);
  t.ok(hook.calls[1]!.verified, 'the call after the rotation verifies with the new secret');
  hook.secret = old;
  t.equal((await rest('three')).status, 201, 'under the old secret the receiver refuses (401): open policy stores it');
  t.notOk(hook.calls[2]!.verified, 'the old secret no longer verifies');

  t.equal((await it.control.del(base, it.accessToken)).status, 204);
  const before = hook.calls.length;
  t.equal((await rest('four')).status, 201);
  t.equal((await ws('five')).type, 'ack');
  t.equal(hook.calls.length, before, 'no call after the delete');
  t.same(await history(), ['five', 'four', 'three', 'two', 'one']);
});

t.test('the SDK: ChatClient surfaces both codes over REST and realtime; ManagementClient manages the hook', async (t) => {
  const { alice, chatId, hook } = await chatWithHook(t, { timeoutMs: 100, failurePolicy: 'closed' });
  hook.answer = (call, res) =>
    call.payload.data.content === 'slow' ? void setTimeout(() => json(res, { action: 'allow' }), 400) : json(res, call.payload.data.content === 'ok' ? { action: 'replace', content: 'OK!' } : { action: 'reject', reason: 'not today' });
  const chat = new ChatClient({ baseUrl: relaxed.nodeUrl, WebSocket: WebSocket as unknown as WebSocketConstructor });
  t.teardown(() => chat.close());
  chat.setAuth({ jwt: alice.jwt, refreshToken: alice.refreshToken, userId: alice.userId });
  const codeOf = (p: Promise<unknown>) => p.then(() => 'sent', (e: unknown) => (e instanceof ChatApiError ? `${e.code}: ${e.problem.detail}` : String(e)));
  t.equal(await codeOf(chat.send(chatId, 'nope')), 'MESSAGE_REJECTED: not today', 'REST (not connected): the code and the reason');
  t.equal(await codeOf(chat.send(chatId, 'slow')), "BEFORE_SEND_FAILED: the application's before-send hook did not answer usably; the message was not sent", 'REST: a failed hook, closed');
  t.equal((await chat.send(chatId, 'ok')).content, 'OK!', 'REST: the stored (replaced) message');
  await chat.connect();
  t.equal(await codeOf(chat.send(chatId, 'nope')), 'MESSAGE_REJECTED: not today', 'realtime: the same');
  t.match(await codeOf(chat.send(chatId, 'slow')), /^BEFORE_SEND_FAILED: /, 'realtime: the same');
  t.equal((await chat.send(chatId, 'ok')).content, 'OK!', 'realtime: the replaced message');

  const mgmt = new ManagementClient({ baseUrl: relaxed.controlUrl });
  const account = newAccount('before-send-sdk');
  await mgmt.register(account);
  const appId = (await mgmt.createApplication('sdk')).id;
  t.equal(await mgmt.getBeforeSendHook(appId), undefined, 'getBeforeSendHook: none');
  const set = await mgmt.setBeforeSendHook(appId, { url: 'https://hooks.example.com/x', timeoutMs: 300 });
  t.match(set, { url: 'https://hooks.example.com/x', timeoutMs: 300, failurePolicy: 'open', secret: /^whsec_/ }, 'setBeforeSendHook: first set, with the secret');
  const changed = await mgmt.setBeforeSendHook(appId, { url: 'https://hooks.example.com/y', failurePolicy: 'closed' });
  t.equal(changed.secret, undefined, 'a change: no secret');
  t.match(await mgmt.getBeforeSendHook(appId), { url: 'https://hooks.example.com/y', timeoutMs: 500, failurePolicy: 'closed' }, 'getBeforeSendHook');
  t.equal(await mgmt.revealBeforeSendSecret(appId), set.secret, 'revealBeforeSendSecret');
  t.not(await mgmt.rotateBeforeSendSecret(appId), set.secret, 'rotateBeforeSendSecret');
  t.equal(await mgmt.deleteBeforeSendHook(appId), undefined, 'deleteBeforeSendHook');
  t.equal(await mgmt.getBeforeSendHook(appId), undefined, 'gone');
  t.equal(await codeOf(mgmt.deleteBeforeSendHook(appId)), 'BEFORE_SEND_NOT_FOUND: this application has no before-send hook');
});

t.test('management: the setting, its defaults, validation, the secret, and other accounts', async (t) => {
  const it = await integration(relaxed, 'before-send-admin');
  const base = `/api/client/apps/${it.appId}/before-send`;
  const api = it.control;
  const token = it.accessToken;
  assertProblem(t, await api.get(base, token), 404, 'BEFORE_SEND_NOT_FOUND', 'none set');
  for (const [body, path] of [
    [{ url: 'not a url' }, '/body/url'],
    [{ url: 'ftp://hooks.example.com/x' }, '/body/url'],
    [{ url: 'https://user:pw@hooks.example.com/x' }, '/body/url'],
    [{ url: 'https://hooks.example.com/x#frag' }, '/body/url'],
    [{ url: `https://hooks.example.com/${'x'.repeat(2100)}` }, '/body/url'],
    [{ url: 'https://hooks.example.com/x', timeoutMs: 49 }, '/body/timeoutMs'],
    [{ url: 'https://hooks.example.com/x', timeoutMs: 2001 }, '/body/timeoutMs'],
    [{ url: 'https://hooks.example.com/x', timeoutMs: 100.5 }, '/body/timeoutMs'],
    [{ url: 'https://hooks.example.com/x', failurePolicy: 'maybe' }, '/body/failurePolicy'],
    [{ url: 'https://hooks.example.com/x', extra: 1 }, '/body'],
    [{}, '/body'],
  ] as const) {
    const res = await api.put(base, body, token);
    assertProblem(t, res, 400, 'VALIDATION_FAILED', JSON.stringify(body).slice(0, 60));
    t.ok((res.body.errors as { path: string }[]).some((e) => e.path.startsWith(path)), `names ${path}: ${JSON.stringify(res.body.errors)}`);
  }

  const created = await api.put(base, { url: 'https://hooks.example.com/a' }, token);
  t.equal(created.status, 201, 'first set: 201');
  t.same(Object.keys(created.body).sort(), ['createdAt', 'failurePolicy', 'secret', 'timeoutMs', 'updatedAt', 'url']);
  t.match(created.body, { url: 'https://hooks.example.com/a', timeoutMs: 500, failurePolicy: 'open' }, 'defaults: 500 ms, open');
  t.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const changed = await api.put(base, { url: 'https://hooks.example.com/b', timeoutMs: 2000, failurePolicy: 'closed' }, token);
  t.equal(changed.status, 200, 'a change: 200');
  t.same(changed.body, { url: 'https://hooks.example.com/b', timeoutMs: 2000, failurePolicy: 'closed', createdAt: created.body.createdAt, updatedAt: changed.body.updatedAt }, 'no secret');
  t.match((await api.put(base, { url: 'https://hooks.example.com/b' }, token)).body, { timeoutMs: 500, failurePolicy: 'open' }, 'PUT replaces: omitted fields take their defaults');
  const got = await api.get(base, token);
  t.notOk(JSON.stringify(got.body).includes('whsec_'), 'get never shows the secret');
  t.same((await api.get(`${base}/secret`, token)).body, { secret: created.body.secret }, 'reveal: the secret is kept by changes');
  const rotated = (await api.post(`${base}/secret/rotate`, undefined, token)).body.secret as string;
  t.not(rotated, created.body.secret);
  t.same((await api.get(`${base}/secret`, token)).body, { secret: rotated });

  const other = client(relaxed.controlUrl);
  const otherToken = (await other.post('/api/auth/register', newAccount('before-send-other'))).body.accessToken as string;
  for (const [method, path, body] of [['GET', base, undefined], ['PUT', base, { url: 'https://evil.example.com/' }], ['DELETE', base, undefined], ['GET', `${base}/secret`, undefined], ['POST', `${base}/secret/rotate`, undefined]] as const) {
    assertProblem(t, await other.call(method, path, { token: otherToken, ...(body ? { body } : {}) }), 404, 'APP_NOT_FOUND', `another account: ${method} ${path}`);
  }
  t.match((await api.get(base, token)).body, { url: 'https://hooks.example.com/b' }, 'unchanged by the other account');

  t.equal((await api.del(base, token)).status, 204);
  assertProblem(t, await api.del(base, token), 404, 'BEFORE_SEND_NOT_FOUND', 'deleted');
  assertProblem(t, await api.get(`${base}/secret`, token), 404, 'BEFORE_SEND_NOT_FOUND', 'no secret either');
  t.equal((await api.put(base, { url: 'https://hooks.example.com/c' }, token)).status, 201, 'set again: a new hook');
  t.equal((await api.del(`/api/client/apps/${it.appId}`, token)).status, 204, 'the application is deleted');
  assertProblem(t, await api.get(base, token), 404, 'APP_NOT_FOUND', 'and its hook with it');
});

t.test('URLs follow the webhook rules: https:// and public addresses only, unless WEBHOOK_ALLOW_INSECURE_URLS', async (t) => {
  const it = await integration(strict, 'before-send-strict');
  const base = `/api/client/apps/${it.appId}/before-send`;
  for (const url of ['http://hooks.example.com/x', 'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://[::1]/x', 'https://localhost/x', 'https://169.254.169.254/latest']) {
    const res = await it.control.put(base, { url }, it.accessToken);
    assertProblem(t, res, 400, 'VALIDATION_FAILED', url);
    t.match(res.body.errors, [{ path: '/body/url' }], `${url}: the field is named`);
  }
  t.equal((await it.control.put(base, { url: 'https://hooks.example.com/chat' }, it.accessToken)).status, 201, 'a public https URL is taken');
});
