import t, { type Test } from 'tap';
import { pack } from 'msgpackr';
import WebSocket from 'ws';
import { integration, startService, WsClient, type Frame, type HttpResult } from '../helpers/index.ts';
import { assertProblem } from '../helpers/problem.ts';

// Bad input over HTTP and WebSocket (malformed JSON and MessagePack, unknown actions, wrong types,
// oversize bodies and frames, ids of another application) gets error replies, never a crash; other
// connections are unaffected. One service for the whole file; each subtest uses its own users.
// The per-connection action rate is raised so the many bad frames (each counts as an action) never
// run into RATE_LIMITED, which would hide the code under test.
const svc = await startService({ WS_ACTIONS_PER_SECOND: '1000' });
t.teardown(() => svc.stop());

const MAX_BODY = 65536; // MAX_BODY_BYTES default (README, Configuration)
const MAX_FRAME = 64 * 1024; // maxFrameBytes (PROTOCOL.md: frames larger than 64 KiB…)
const NIL_UUID = '00000000-0000-4000-8000-000000000000';

/** A 4xx problem response with `code`, and in any case never a 5xx. */
function refused(t: Test, res: HttpResult, status: number, code: string, label: string): void {
  t.ok(res.status < 500, `${label}: not a 5xx (${res.status} ${res.text.slice(0, 120)})`);
  assertProblem(t, res, status, code, label);
}

/** Pino lines at level error (50) or fatal (60) the service wrote so far. */
function errorLogs(): string[] {
  return svc
    .output()
    .split('\n')
    .filter((line) => {
      try {
        return (JSON.parse(line) as { level?: number }).level! >= 50;
      } catch {
        return false;
      }
    });
}

/** POST with a chunked body (no content-length), so the limit must be enforced while streaming. */
async function postChunked(url: string, token: string, chunk: Buffer, chunks: number): Promise<HttpResult> {
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent++ < chunks) controller.enqueue(chunk);
      else controller.close();
    },
  });
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: stream,
    duplex: 'half',
  } as RequestInit);
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

t.test('HTTP: malformed, mistyped, incomplete, unknown, oversize input gets a 4xx problem, never a 5xx', async (t) => {
  const it = await integration(svc, 'bad-http');
  const other = await integration(svc, 'bad-http-other');
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const stranger = await other.user('stranger');
  const group = await it.node.post('/api/chats', { type: 'group', name: 'Bad input', memberIds: [bob.userId] }, alice.jwt);
  t.equal(group.status, 201);
  const chatId = group.body.chatId as string;
  const sent: any[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await it.node.post(`/api/messages/${chatId}`, { content: `m${i}` }, alice.jwt);
    t.equal(r.status, 201);
    sent.push(r.body.message);
  }
  const messageId = sent[0].messageId as string;
  const foreignChat = await other.node.post('/api/chats', { type: 'direct', userId: (await other.user('s2')).userId }, stranger.jwt);
  const foreignChatId = foreignChat.body.chatId as string;
  const foreignMessage = (await other.node.post(`/api/messages/${foreignChatId}`, { content: 'theirs' }, stranger.jwt)).body.message.messageId as string;

  const node = it.node;
  const raw = (method: string, path: string, token: string, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    node.call(method, path, { token, raw: body, headers });
  const VF = 'VALIDATION_FAILED';
  const key = it.apiKey;
  const jwt = alice.jwt;
  const msgPath = `/api/messages/${chatId}`;

  type Case = [label: string, run: () => Promise<HttpResult>, status: number, code: string];
  const cases: Case[] = [
    // ---- users (API key) ----
    ['users: malformed JSON', () => raw('POST', '/api/users', key, '{"username": "x"'), 400, 'MALFORMED_JSON'],
    ['users: not UTF-8', () => raw('POST', '/api/users', key, Buffer.from([0xff, 0xfe, 0x7b, 0x00])), 400, 'MALFORMED_JSON'],
    ['users: no body', () => node.post('/api/users', undefined, key), 400, VF],
    ['users: body is null', () => raw('POST', '/api/users', key, 'null'), 400, VF],
    ['users: body is an array', () => raw('POST', '/api/users', key, '[{"username":"x"}]'), 400, VF],
    ['users: body is a string', () => raw('POST', '/api/users', key, '"x"'), 400, VF],
    ['users: missing username', () => node.post('/api/users', {}, key), 400, VF],
    ['users: username of wrong type', () => node.post('/api/users', { username: 5 }, key), 400, VF],
    ['users: username deeply nested', () => raw('POST', '/api/users', key, `{"username":${'['.repeat(20000)}${']'.repeat(20000)}}`), 400, VF],
    ['users: username with bad characters', () => node.post('/api/users', { username: 'a b/c' }, key), 400, VF],
    ['users: unknown field', () => node.post('/api/users', { username: 'fine', admin: true }, key), 400, VF],
    ['users: __proto__ field', () => raw('POST', '/api/users', key, '{"username":"fine2","__proto__":{"admin":true}}'), 400, VF],
    ['users: text/plain', () => raw('POST', '/api/users', key, '{"username":"fine3"}', { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['signin: malformed JSON', () => raw('POST', '/api/users/signin', key, '{userId:1}'), 400, 'MALFORMED_JSON'],
    ['signin: empty object', () => node.post('/api/users/signin', {}, key), 400, VF],
    ['signin: userId not a uuid', () => node.post('/api/users/signin', { userId: 'bob' }, key), 400, VF],
    ['signin: userId and username together', () => node.post('/api/users/signin', { userId: bob.userId, username: bob.username }, key), 400, VF],
    ['signin: userId of wrong type', () => node.post('/api/users/signin', { userId: 12 }, key), 400, VF],
    ['signin: user of another application', () => node.post('/api/users/signin', { userId: stranger.userId }, key), 404, 'USER_NOT_FOUND'],
    ['get user: id not a uuid', () => node.get('/api/users/not-a-uuid', key), 400, VF],
    ['get user: unknown id', () => node.get(`/api/users/${NIL_UUID}`, key), 404, 'USER_NOT_FOUND'],
    ['get user: user of another application', () => node.get(`/api/users/${stranger.userId}`, key), 404, 'USER_NOT_FOUND'],
    ['update user: id not a uuid', () => node.put('/api/users/123', { displayName: 'X' }, key), 400, VF],
    ['update user: malformed JSON', () => raw('PUT', `/api/users/${bob.userId}`, key, '{"displayName":'), 400, 'MALFORMED_JSON'],
    ['update user: missing displayName', () => node.put(`/api/users/${bob.userId}`, {}, key), 400, VF],
    ['update user: displayName of wrong type', () => node.put(`/api/users/${bob.userId}`, { displayName: ['B'] }, key), 400, VF],
    ['update user: displayName with surrounding blanks', () => node.put(`/api/users/${bob.userId}`, { displayName: ' Bob ' }, key), 400, VF],
    ['update user: unknown field', () => node.put(`/api/users/${bob.userId}`, { displayName: 'Bob', username: 'mallory' }, key), 400, VF],
    ['delete user: id not a uuid', () => node.del('/api/users/%20', key), 400, VF],
    ['refresh: malformed JSON', () => raw('POST', '/api/users/refresh', '', '{"refreshToken"'), 400, 'MALFORMED_JSON'],
    ['refresh: wrong type', () => node.post('/api/users/refresh', { refreshToken: 42 }, undefined), 400, VF],
    ['refresh: empty token', () => node.post('/api/users/refresh', { refreshToken: '' }, undefined), 400, VF],
    ['refresh: garbage token', () => node.post('/api/users/refresh', { refreshToken: 'urt_garbage' }, undefined), 401, 'REFRESH_TOKEN_INVALID'],
    // ---- chats (user JWT) ----
    ['create chat: malformed JSON', () => raw('POST', '/api/chats', jwt, '{"type":"direct",}'), 400, 'MALFORMED_JSON'],
    ['create chat: no body', () => node.post('/api/chats', undefined, jwt), 400, VF],
    ['create chat: empty object', () => node.post('/api/chats', {}, jwt), 400, VF],
    ['create chat: unknown type', () => node.post('/api/chats', { type: 'channel', userId: bob.userId }, jwt), 400, VF],
    ['create chat: direct without userId', () => node.post('/api/chats', { type: 'direct' }, jwt), 400, VF],
    ['create chat: userId not a uuid', () => node.post('/api/chats', { type: 'direct', userId: 'bob' }, jwt), 400, VF],
    ['create chat: userId of wrong type', () => node.post('/api/chats', { type: 'direct', userId: 7 }, jwt), 400, VF],
    ['create chat: unknown field', () => node.post('/api/chats', { type: 'direct', userId: bob.userId, topic: 'x' }, jwt), 400, VF],
    ['create chat: group without name', () => node.post('/api/chats', { type: 'group', memberIds: [bob.userId] }, jwt), 400, VF],
    ['create chat: memberIds not an array', () => node.post('/api/chats', { type: 'group', name: 'G', memberIds: bob.userId }, jwt), 400, VF],
    ['create chat: memberIds with a non-uuid', () => node.post('/api/chats', { type: 'group', name: 'G', memberIds: ['bob'] }, jwt), 400, VF],
    ['create chat: user of another application', () => node.post('/api/chats', { type: 'direct', userId: stranger.userId }, jwt), 404, 'USER_NOT_FOUND'],
    ['list chats: size=0', () => node.get('/api/chats?size=0', jwt), 400, VF],
    ['list chats: size=abc', () => node.get('/api/chats?size=abc', jwt), 400, VF],
    ['list chats: bad cursor', () => node.get('/api/chats?cursor=%%%', jwt), 400, VF],
    ['get chat: id not a uuid', () => node.get('/api/chats/general', jwt), 400, VF],
    ['get chat: unknown id', () => node.get(`/api/chats/${NIL_UUID}`, jwt), 404, 'CHAT_NOT_FOUND'],
    ['get chat: chat of another application', () => node.get(`/api/chats/${foreignChatId}`, jwt), 404, 'CHAT_NOT_FOUND'],
    ['members: id not a uuid', () => node.get('/api/chats/1/members', jwt), 400, VF],
    ['rename: malformed JSON', () => raw('PUT', `/api/chats/${chatId}`, jwt, '{name:"x"}'), 400, 'MALFORMED_JSON'],
    ['rename: empty name', () => node.put(`/api/chats/${chatId}`, { name: '' }, jwt), 400, VF],
    ['rename: name of wrong type', () => node.put(`/api/chats/${chatId}`, { name: { en: 'x' } }, jwt), 400, VF],
    ['rename: name too long', () => node.put(`/api/chats/${chatId}`, { name: 'n'.repeat(101) }, jwt), 400, VF],
    ['add members: empty list', () => node.post(`/api/chats/${chatId}/members`, { userIds: [] }, jwt), 400, VF],
    ['add members: non-uuid', () => node.post(`/api/chats/${chatId}/members`, { userIds: ['x'] }, jwt), 400, VF],
    ['add members: role owner', () => node.post(`/api/chats/${chatId}/members`, { userIds: [bob.userId], role: 'owner' }, jwt), 400, VF],
    ['add members: user of another application', () => node.post(`/api/chats/${chatId}/members`, { userIds: [stranger.userId] }, jwt), 404, 'USER_NOT_FOUND'],
    ['set role: missing role', () => node.put(`/api/chats/${chatId}/members/${bob.userId}`, {}, jwt), 400, VF],
    ['set role: unknown role', () => node.put(`/api/chats/${chatId}/members/${bob.userId}`, { role: 'god' }, jwt), 400, VF],
    ['set role: userId not a uuid', () => node.put(`/api/chats/${chatId}/members/bob`, { role: 'admin' }, jwt), 400, VF],
    ['remove member: userId not a uuid', () => node.del(`/api/chats/${chatId}/members/bob`, jwt), 400, VF],
    ['read: seq of wrong type', () => node.post(`/api/chats/${chatId}/read`, { seq: '2' }, jwt), 400, VF],
    ['read: negative seq', () => node.post(`/api/chats/${chatId}/read`, { seq: -1 }, jwt), 400, VF],
    ['read: fractional seq', () => node.post(`/api/chats/${chatId}/read`, { seq: 1.5 }, jwt), 400, VF],
    ['read: missing seq', () => node.post(`/api/chats/${chatId}/read`, {}, jwt), 400, VF],
    // ---- messages (user JWT) ----
    ['send: malformed JSON', () => raw('POST', msgPath, jwt, '{"content": "hi'), 400, 'MALFORMED_JSON'],
    ['send: no body', () => node.post(msgPath, undefined, jwt), 400, VF],
    ['send: missing content', () => node.post(msgPath, {}, jwt), 400, VF],
    ['send: content of wrong type', () => node.post(msgPath, { content: 42 }, jwt), 400, VF],
    ['send: content null', () => node.post(msgPath, { content: null }, jwt), 400, VF],
    ['send: empty content', () => node.post(msgPath, { content: '' }, jwt), 400, VF],
    ['send: content over 4000 characters', () => node.post(msgPath, { content: 'x'.repeat(4001) }, jwt), 400, VF],
    ['send: unknown field', () => node.post(msgPath, { content: 'hi', color: 'red' }, jwt), 400, VF],
    ['send: replyTo not a uuid', () => node.post(msgPath, { content: 'hi', replyTo: 'first' }, jwt), 400, VF],
    ['send: replyTo unknown', () => node.post(msgPath, { content: 'hi', replyTo: NIL_UUID }, jwt), 404, 'MESSAGE_NOT_FOUND'],
    ['send: replyTo a message of another application', () => node.post(msgPath, { content: 'hi', replyTo: foreignMessage }, jwt), 404, 'MESSAGE_NOT_FOUND'],
    ['send: idempotencyKey too long', () => node.post(msgPath, { content: 'hi', idempotencyKey: 'k'.repeat(65) }, jwt), 400, VF],
    ['send: Idempotency-Key header too long', () => node.call('POST', msgPath, { token: jwt, body: { content: 'hi' }, headers: { 'idempotency-key': 'k'.repeat(65) } }), 400, VF],
    ['send: chatId not a uuid', () => node.post('/api/messages/general', { content: 'hi' }, jwt), 400, VF],
    ['send: chat of another application', () => node.post(`/api/messages/${foreignChatId}`, { content: 'hi' }, jwt), 404, 'CHAT_NOT_FOUND'],
    ['edit: messageId not a uuid', () => node.put(`${msgPath}/first`, { content: 'x' }, jwt), 400, VF],
    ['edit: malformed JSON', () => raw('PUT', `${msgPath}/${messageId}`, jwt, '{"content"}'), 400, 'MALFORMED_JSON'],
    ['edit: empty content', () => node.put(`${msgPath}/${messageId}`, { content: '' }, jwt), 400, VF],
    ['edit: content over 4000 characters', () => node.put(`${msgPath}/${messageId}`, { content: 'y'.repeat(4001) }, jwt), 400, VF],
    ['edit: unknown field', () => node.put(`${msgPath}/${messageId}`, { content: 'y', pinned: true }, jwt), 400, VF],
    ['edit: message of another application', () => node.put(`${msgPath}/${foreignMessage}`, { content: 'y' }, jwt), 404, 'MESSAGE_NOT_FOUND'],
    ['delete: messageId not a uuid', () => node.del(`${msgPath}/1`, jwt), 400, VF],
    ['react: missing reaction', () => node.post(`${msgPath}/${messageId}/reactions`, {}, jwt), 400, VF],
    ['react: empty reaction', () => node.post(`${msgPath}/${messageId}/reactions`, { reaction: '' }, jwt), 400, VF],
    ['react: reaction over 32 characters', () => node.post(`${msgPath}/${messageId}/reactions`, { reaction: 'r'.repeat(33) }, jwt), 400, VF],
    ['react: reaction of wrong type', () => node.post(`${msgPath}/${messageId}/reactions`, { reaction: 1 }, jwt), 400, VF],
    ['unreact: reaction over 32 characters', () => node.del(`${msgPath}/${messageId}/reactions/${'r'.repeat(33)}`, jwt), 400, VF],
    // ---- getMessages: README "size: default 50, minimum 1, maximum 100", limits table "400" ----
    ['getMessages: chatId not a uuid', () => node.get('/api/messages/getMessages/general', jwt), 400, VF],
    ['getMessages: size=0', () => node.get(`/api/messages/getMessages/${chatId}?size=0`, jwt), 400, VF],
    ['getMessages: size=-1', () => node.get(`/api/messages/getMessages/${chatId}?size=-1`, jwt), 400, VF],
    ['getMessages: size=abc', () => node.get(`/api/messages/getMessages/${chatId}?size=abc`, jwt), 400, VF],
    ['getMessages: size=101 (over max)', () => node.get(`/api/messages/getMessages/${chatId}?size=101`, jwt), 400, VF],
    ['getMessages: lastMessage not a uuid', () => node.get(`/api/messages/getMessages/${chatId}?lastMessage=oldest`, jwt), 400, VF],
    ['getMessages: lastMessage unknown', () => node.get(`/api/messages/getMessages/${chatId}?lastMessage=${NIL_UUID}`, jwt), 400, VF],
    ['getMessages: lastMessage of another application', () => node.get(`/api/messages/getMessages/${chatId}?lastMessage=${foreignMessage}`, jwt), 400, VF],
    ['getMessages: unknown chat', () => node.get(`/api/messages/getMessages/${NIL_UUID}`, jwt), 400, 'CHAT_NOT_ACCESSIBLE'],
    ['getMessages: chat of another application', () => node.get(`/api/messages/getMessages/${foreignChatId}`, jwt), 400, 'CHAT_NOT_ACCESSIBLE'],
    // ---- routing and credentials ----
    ['unknown route', () => node.get('/api/nothing-here', jwt), 404, 'ROUTE_NOT_FOUND'],
    ['undecodable path segment', () => node.get('/api/chats/%E0%A4%A', jwt), 404, 'ROUTE_NOT_FOUND'],
    ['method not allowed', () => node.call('PATCH', `/api/chats/${chatId}`, { token: jwt, body: { name: 'x' } }), 405, 'METHOD_NOT_ALLOWED'],
    ['user JWT where an API key is expected', () => node.get(`/api/users/${bob.userId}`, jwt), 401, 'API_KEY_INVALID'],
    ['API key where a user JWT is expected', () => node.get('/api/chats', key), 401, 'TOKEN_INVALID'],
    ['garbage bearer token', () => node.get('/api/chats', 'not.a.jwt'), 401, 'TOKEN_INVALID'],
  ];

  for (const [label, run, status, code] of cases) {
    // Some refusals depend on the order of checks (auth before validation or after) only in which
    // 4xx comes out; every case here names the one the service documents for it.
    refused(t, await run(), status, code, label);
  }

  // Oversize bodies: declared (content-length) and streamed (chunked, no length).
  const big = Buffer.from(JSON.stringify({ content: 'x'.repeat(MAX_BODY + 10) }));
  refused(t, await raw('POST', msgPath, jwt, big), 413, 'PAYLOAD_TOO_LARGE', 'send: body over MAX_BODY_BYTES (content-length)');
  refused(t, await raw('POST', '/api/users', key, big), 413, 'PAYLOAD_TOO_LARGE', 'users: body over MAX_BODY_BYTES (content-length)');
  refused(t, await postChunked(`${svc.nodeUrl}${msgPath}`, jwt, Buffer.alloc(16 * 1024, 0x20), 8), 413, 'PAYLOAD_TOO_LARGE', 'send: body over MAX_BODY_BYTES (chunked)');
  // Exactly the limit is read and then judged by the schema (content too long), not 413.
  const prefix = '{"content":"';
  const atLimit = Buffer.from(prefix + 'x'.repeat(MAX_BODY - prefix.length - 2) + '"}');
  t.equal(atLimit.length, MAX_BODY);
  refused(t, await raw('POST', msgPath, jwt, atLimit), 400, VF, 'send: body of exactly MAX_BODY_BYTES');

  // Boundaries that must be accepted, and "empty lastMessage is treated as absent".
  t.equal((await node.post(msgPath, { content: 'z'.repeat(4000) }, jwt)).status, 201, 'content of exactly 4000 characters is accepted');
  const absent = await node.get(`/api/messages/getMessages/${chatId}?size=2`, jwt);
  const empty = await node.get(`/api/messages/getMessages/${chatId}?size=2&lastMessage=`, jwt);
  t.equal(absent.status, 200);
  t.equal(empty.status, 200, 'empty lastMessage is accepted');
  t.same(empty.body.messages.map((m: any) => m.seq), absent.body.messages.map((m: any) => m.seq), 'empty lastMessage is the same as absent: from the newest');
  t.same(absent.body.messages.map((m: any) => m.seq), [4, 3]);
  t.equal((await node.get(`/api/messages/getMessages/${chatId}?size=100`, jwt)).status, 200, 'size=100 (the maximum) is accepted');
  t.equal((await node.get(`/api/messages/getMessages/${chatId}?size=1`, jwt)).body.messages.length, 1, 'size=1 (the minimum) is accepted');

  // Nothing the bad requests named changed anything.
  const history = await node.get(`/api/messages/getMessages/${chatId}`, bob.jwt);
  t.same(history.body.messages.map((m: any) => [m.seq, m.content.slice(0, 3), m.edited, m.deleted, m.reactions.length]), [
    [4, 'zzz', false, false, 0],
    [3, 'm2', false, false, 0],
    [2, 'm1', false, false, 0],
    [1, 'm0', false, false, 0],
  ], 'only the valid sends landed; no edit, delete or reaction slipped through');
  const chat = await node.get(`/api/chats/${chatId}`, jwt);
  t.equal(chat.body.name, 'Bad input', 'no rename slipped through');
  t.same((await node.get(`/api/chats/${chatId}/members`, jwt)).body.members.map((m: any) => [m.userId, m.role]).sort(), [
    [alice.userId, 'owner'],
    [bob.userId, 'member'],
  ].sort(), 'members unchanged');
  t.equal((await node.get(`/api/users/${bob.userId}`, key)).body.displayName, bob.username, 'user unchanged');

  // Query values that are not integers are refused, never coerced (1.5 → 1, true → 1, 0x10 → 16).
  await t.test('non-integer size values are refused (400), not coerced', async (t) => {
    for (const q of ['size=1.5', 'size=true', 'size=0x10']) {
      const res = await node.get(`/api/messages/getMessages/${chatId}?${q}`, jwt);
      t.equal(res.status, 400, `getMessages ${q}: 400 (got ${res.status}, ${res.body?.messages?.length ?? '-'} messages)`);
      t.ok(res.status < 500, `getMessages ${q}: never 5xx`);
    }
    const list = await node.get('/api/chats?size=1.5', jwt);
    t.equal(list.status, 400, `list chats size=1.5: 400 (got ${list.status})`);
  });

  t.equal((await node.get('/healthz')).status, 200, '/healthz is 200 afterwards');
  t.same(errorLogs(), [], 'the service logged no error');
});

// ---- WebSocket ------------------------------------------------------------------------------------

interface BadFrame {
  label: string;
  data: string | Buffer;
  binary: boolean;
  /** Acceptable codes of the one error frame. */
  codes: string[];
  /** The id the error frame must carry; undefined: it carries none. */
  id?: string;
  /** For ids the schema refuses (too long): any id that is a prefix of this one, or none. */
  idPrefixOf?: string;
}

const text = (label: string, value: string, codes: string[], id?: string): BadFrame => ({ label, data: value, binary: false, codes, id });
const binary = (label: string, value: Buffer, codes: string[], id?: string): BadFrame => ({ label, data: value, binary: true, codes, id });

/**
 * The bad frames, encoded as the socket's own encoding would (JSON text or MessagePack binary),
 * plus the malformed frames of both kinds on every socket (the server decodes by frame type).
 */
function badFrames(encoding: 'json' | 'msgpack', chatId: string, messageId: string, foreignChatId: string, foreignMessageId: string): BadFrame[] {
  const enc = (label: string, value: unknown, codes: string[], id?: string): BadFrame =>
    encoding === 'json' ? text(label, JSON.stringify(value), codes, id) : binary(label, pack(value), codes, id);
  const p = encoding; // ids unique per socket
  const VF = ['VALIDATION_FAILED'];
  // A frame that decodes but is not an object has no action type: the docs do not say which of the
  // two codes for undecodable or typeless frames applies, so either is accepted.
  const NOT_AN_ACTION = ['UNKNOWN_ACTION', 'MALFORMED_FRAME'];
  return [
    text('malformed JSON text frame', '{"type":"ping","id":"m1"', ['MALFORMED_FRAME']),
    text('JSON with a trailing comma', '{"type":"ping","id":"m2",}', ['MALFORMED_FRAME']),
    text('empty text frame', '', ['MALFORMED_FRAME']),
    binary('truncated MessagePack binary frame', Buffer.from([0x82, 0xa4, 0x74, 0x79]), ['MALFORMED_FRAME']),
    binary('MessagePack with trailing bytes', Buffer.concat([pack({ type: 'ping', id: `${p}-t` }), Buffer.from([0xc1])]), ['MALFORMED_FRAME']),
    binary('empty binary frame', Buffer.alloc(0), ['MALFORMED_FRAME']),
    enc('a number', 42, NOT_AN_ACTION),
    enc('null', null, NOT_AN_ACTION),
    enc('a string', 'message.send', NOT_AN_ACTION),
    enc('an array', ['ping', `${p}-arr`], NOT_AN_ACTION),
    enc('unknown action type', { type: 'message.explode', id: `${p}-u1`, chatId }, ['UNKNOWN_ACTION'], `${p}-u1`),
    enc('missing type', { id: `${p}-u2`, chatId, content: 'x' }, ['UNKNOWN_ACTION'], `${p}-u2`),
    enc('type of wrong type', { type: 7, id: `${p}-u3` }, ['UNKNOWN_ACTION'], `${p}-u3`),
    enc('type naming an Object.prototype member', { type: 'constructor', id: `${p}-u4` }, ['UNKNOWN_ACTION'], `${p}-u4`),
    enc('type __proto__', { type: '__proto__', id: `${p}-u5` }, ['UNKNOWN_ACTION'], `${p}-u5`),
    enc('missing id (ping)', { type: 'ping' }, VF),
    enc('missing id (message.send)', { type: 'message.send', chatId, content: 'must not be sent' }, VF),
    enc('id of wrong type', { type: 'ping', id: 12 }, VF),
    { ...enc('id over 64 characters', { type: 'ping', id: `${p}-${'i'.repeat(70)}` }, VF), idPrefixOf: `${p}-${'i'.repeat(70)}` },
    enc('send: chatId of wrong type', { type: 'message.send', id: `${p}-w1`, chatId: 123, content: 'x' }, VF, `${p}-w1`),
    enc('send: chatId not a uuid', { type: 'message.send', id: `${p}-w2`, chatId: 'general', content: 'x' }, VF, `${p}-w2`),
    enc('send: content of wrong type', { type: 'message.send', id: `${p}-w3`, chatId, content: 5 }, VF, `${p}-w3`),
    enc('send: missing content', { type: 'message.send', id: `${p}-w4`, chatId }, VF, `${p}-w4`),
    enc('send: empty content', { type: 'message.send', id: `${p}-w5`, chatId, content: '' }, VF, `${p}-w5`),
    enc('send: content over 4000 characters', { type: 'message.send', id: `${p}-w6`, chatId, content: 'x'.repeat(4001) }, VF, `${p}-w6`),
    enc('send: unknown field', { type: 'message.send', id: `${p}-w7`, chatId, content: 'x', color: 'red' }, VF, `${p}-w7`),
    enc('send: replyTo not a uuid', { type: 'message.send', id: `${p}-w8`, chatId, content: 'x', replyTo: 'first' }, VF, `${p}-w8`),
    enc('edit: messageId not a uuid', { type: 'message.edit', id: `${p}-w9`, chatId, messageId: 'first', content: 'x' }, VF, `${p}-w9`),
    enc('react: reaction over 32 characters', { type: 'reaction.add', id: `${p}-w10`, chatId, messageId, reaction: 'r'.repeat(33) }, VF, `${p}-w10`),
    enc('read.mark: seq of wrong type', { type: 'read.mark', id: `${p}-w11`, chatId, seq: '1' }, VF, `${p}-w11`),
    enc('read.mark: negative seq', { type: 'read.mark', id: `${p}-w12`, chatId, seq: -1 }, VF, `${p}-w12`),
    enc('ping: unknown field', { type: 'ping', id: `${p}-w13`, extra: true }, VF, `${p}-w13`),
    enc('send to an unknown chat', { type: 'message.send', id: `${p}-c1`, chatId: NIL_UUID, content: 'x' }, ['CHAT_NOT_FOUND'], `${p}-c1`),
    enc('send to a chat of another application', { type: 'message.send', id: `${p}-c2`, chatId: foreignChatId, content: 'must not land' }, ['CHAT_NOT_FOUND'], `${p}-c2`),
    enc('edit in a chat of another application', { type: 'message.edit', id: `${p}-c3`, chatId: foreignChatId, messageId: foreignMessageId, content: 'x' }, ['CHAT_NOT_FOUND'], `${p}-c3`),
    enc('react in a chat of another application', { type: 'reaction.add', id: `${p}-c4`, chatId: foreignChatId, messageId: foreignMessageId, reaction: '👍' }, ['CHAT_NOT_FOUND'], `${p}-c4`),
    enc('typing in a chat of another application', { type: 'typing.start', id: `${p}-c5`, chatId: foreignChatId }, ['CHAT_NOT_FOUND'], `${p}-c5`),
    enc('message of another application in my chat', { type: 'message.delete', id: `${p}-c6`, chatId, messageId: foreignMessageId }, ['MESSAGE_NOT_FOUND'], `${p}-c6`),
    // Oversize: a frame over maxFrameBytes (but within the 1 MiB hard limit) is answered, not fatal.
    // It is not decoded, so the error carries no id (an id read from it would be accepted too).
    {
      ...enc('100 KiB frame', { type: 'message.send', id: `${p}-big`, chatId, content: 'b'.repeat(100 * 1024) }, ['FRAME_TOO_LARGE']),
      idPrefixOf: `${p}-big`,
    },
    { ...sized(encoding, `${p}-edge1`, chatId, MAX_FRAME + 1, ['FRAME_TOO_LARGE']), idPrefixOf: `${p}-edge1` },
    // Exactly maxFrameBytes is decoded and judged by the schema (content too long), with its id.
    sized(encoding, `${p}-edge0`, chatId, MAX_FRAME, VF, `${p}-edge0`),
  ];
}

/** A message.send frame of exactly `bytes` bytes in the socket's encoding. */
function sized(encoding: 'json' | 'msgpack', id: string, chatId: string, bytes: number, codes: string[], expectId?: string): BadFrame {
  const build = (n: number) => {
    const value = { type: 'message.send', id, chatId, content: 'e'.repeat(n) };
    return encoding === 'json' ? Buffer.from(JSON.stringify(value)) : pack(value);
  };
  // Content length n maps to size n + overhead, except where MessagePack's string header grows;
  // search the few candidates around the estimate.
  const overhead = build(0).length;
  for (let n = bytes - overhead - 8; n <= bytes - overhead + 8; n++) {
    const data = build(n);
    if (data.length === bytes) {
      const label = `frame of exactly ${bytes} bytes`;
      return encoding === 'json' ? { label, data: data.toString('utf8'), binary: false, codes, id: expectId } : { label, data, binary: true, codes, id: expectId };
    }
  }
  throw new Error(`cannot build a ${bytes}-byte frame`);
}

/** Sends one bad frame; then a ping as a barrier; expects exactly one error frame for it. */
async function sendBad(t: Test, ws: WsClient, bad: BadFrame): Promise<void> {
  if (ws.closed) {
    // Fail fast instead of timing out on every remaining frame.
    t.fail(`${ws.encoding} / ${bad.label}: the socket was closed earlier (${ws.closed.code} ${ws.closed.reason})`);
    return;
  }
  const from = ws.frames.length;
  ws.sendRaw(bad.data, bad.binary);
  const idOk = (f: Frame) =>
    bad.idPrefixOf !== undefined ? f.id === undefined || (typeof f.id === 'string' && f.id.length > 0 && bad.idPrefixOf.startsWith(f.id)) : bad.id === undefined ? !('id' in f) : f.id === bad.id;
  let reply: Frame | undefined;
  try {
    reply = await ws.waitFor((f) => f.type === 'error' && idOk(f), 5000, from);
  } catch (error) {
    t.fail(`${ws.encoding} / ${bad.label}: no error frame (${(error as Error).message.slice(0, 300)})`);
    return;
  }
  t.ok(bad.codes.includes(reply.code), `${ws.encoding} / ${bad.label}: code ${reply.code} in ${bad.codes.join('|')}`);
  t.equal(typeof reply.message, 'string', `${ws.encoding} / ${bad.label}: has a message`);
  t.equal(reply.v, 1, `${ws.encoding} / ${bad.label}: v 1`);
  // Barrier: frames are handled in order, so everything the bad frame caused synchronously is in
  // before the ping's ack.
  const barrier = await ws.request({ type: 'ping' });
  t.equal(barrier.type, 'ack', `${ws.encoding} / ${bad.label}: the socket still answers`);
  const replies = ws.frames.slice(from).filter((f) => (f.type === 'error' || f.type === 'ack') && f.id !== barrier.id);
  t.equal(replies.length, 1, `${ws.encoding} / ${bad.label}: exactly one reply (${JSON.stringify(replies).slice(0, 300)})`);
}

for (const encoding of ['json', 'msgpack'] as const) {
  t.test(`WebSocket (${encoding}): every bad frame gets exactly one error frame; the socket and others carry on`, async (t) => {
    const it = await integration(svc, `bad-ws-${encoding}`);
    const other = await integration(svc, `bad-ws-${encoding}-other`);
    const [alice, bob] = [await it.user('alice'), await it.user('bob')];
    const [s1, s2] = [await other.user('s1'), await other.user('s2')];
    const chat = await it.node.post('/api/chats', { type: 'group', name: 'WS', memberIds: [bob.userId] }, alice.jwt);
    const chatId = chat.body.chatId as string;
    const first = await it.node.post(`/api/messages/${chatId}`, { content: 'first' }, alice.jwt);
    const messageId = first.body.message.messageId as string;
    const foreign = await other.node.post('/api/chats', { type: 'direct', userId: s2.userId }, s1.jwt);
    const foreignChatId = foreign.body.chatId as string;
    const foreignMessageId = (await other.node.post(`/api/messages/${foreignChatId}`, { content: 'theirs' }, s1.jwt)).body.message.messageId as string;

    const ws = await WsClient.connect(svc.nodeUrl, alice.jwt, { encoding });
    const bystander = await WsClient.connect(svc.nodeUrl, bob.jwt, { encoding: encoding === 'json' ? 'msgpack' : 'json' });
    const bystander2 = await WsClient.connect(svc.nodeUrl, bob.jwt, { encoding });
    const foreignWatcher = await WsClient.connect(svc.nodeUrl, s2.jwt);
    t.teardown(() => Promise.all([ws.close(), bystander.close(), bystander2.close(), foreignWatcher.close()]));

    const frames = badFrames(encoding, chatId, messageId, foreignChatId, foreignMessageId);
    for (const bad of frames) await sendBad(t, ws, bad);
    t.notOk(ws.closed, 'the socket that sent the bad frames is open');

    // A frame past the 1 MiB hard limit ends only that socket (1009 from uWS, or 1006).
    const doomed = await WsClient.connect(svc.nodeUrl, alice.jwt, { encoding });
    const closed = doomed.waitClosed();
    doomed.socket.on('error', () => undefined);
    doomed.sendRaw(Buffer.alloc(1024 * 1024 + 1024, 0x61), encoding === 'msgpack');
    const { code } = await closed;
    t.ok(code === 1009 || code === 1006, `a frame over 1 MiB closes that socket (${code})`);

    // The same socket still works, and the bystanders receive the message: once, nothing else odd.
    const ack = await ws.request({ type: 'message.send', chatId, content: 'after the storm' });
    t.equal(ack.type, 'ack', 'the socket still sends');
    t.equal(ack.result.message.seq, 2, 'no bad frame sent a message: this is the second');
    for (const b of [bystander, bystander2]) {
      const got = await b.waitFor((f) => f.type === 'message.new' && f.message.content === 'after the storm');
      t.equal(got.seq, 2);
      t.notOk(b.closed, `bystander (${b.encoding}) still open`);
      t.same(b.frames.filter((f) => f.type === 'error'), [], `bystander (${b.encoding}) got no error frame`);
      t.same(
        b.frames.filter((f) => f.type.startsWith('message.') || f.type.startsWith('reaction.') || f.type.startsWith('typing.')).map((f) => [f.type, f.seq]),
        [['message.new', 2]],
        `bystander (${b.encoding}) saw only the valid message`,
      );
    }
    // The other application's chat saw nothing of the attempts.
    const ping = await foreignWatcher.request({ type: 'ping' });
    t.equal(ping.type, 'ack');
    t.same(foreignWatcher.frames.filter((f) => f.chatId !== undefined), [], 'the other application’s member got no chat event');
    const theirs = await other.node.get(`/api/messages/getMessages/${foreignChatId}`, s2.jwt);
    t.same(theirs.body.messages.map((m: any) => [m.content, m.edited, m.reactions.length]), [['theirs', false, 0]], 'the other application’s chat is unchanged');
    const ours = await it.node.get(`/api/messages/getMessages/${chatId}`, bob.jwt);
    t.same(ours.body.messages.map((m: any) => m.content), ['after the storm', 'first'], 'history holds only the valid messages');

    t.equal((await it.node.get('/healthz')).status, 200, '/healthz is 200');
    t.same(errorLogs(), [], 'the service logged no error');
  });
}

t.test('a raw ws client that sends garbage right after the upgrade does not disturb others', async (t) => {
  // Frames sent before `ready` arrives, on a socket that never reads: still one error each.
  const it = await integration(svc, 'bad-early');
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chat = await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt);
  const watcher = await WsClient.connect(svc.nodeUrl, bob.jwt);
  t.teardown(() => watcher.close());
  const socket = new WebSocket(`${svc.nodeUrl.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(alice.jwt)}`);
  const received: any[] = [];
  socket.on('message', (data) => received.push(JSON.parse(String(data))));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  for (let i = 0; i < 5; i++) socket.send(`{{{${i}`);
  socket.send(JSON.stringify({ type: 'ping', id: 'last' }));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ack: ${JSON.stringify(received)}`)), 5000);
    socket.on('message', () => {
      if (received.some((f) => f.type === 'ack' && f.id === 'last')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  t.equal(received.filter((f) => f.type === 'error' && f.code === 'MALFORMED_FRAME' && !('id' in f)).length, 5, 'five malformed frames, five error frames');
  socket.close();
  const sent = await it.node.post(`/api/messages/${chat.body.chatId}`, { content: 'still fine' }, alice.jwt);
  t.equal(sent.status, 201);
  await watcher.waitFor((f) => f.type === 'message.new' && f.message.content === 'still fine');
  t.same(watcher.frames.filter((f) => f.type === 'error'), []);
});

t.test('unknown query parameters are refused like unknown body fields, naming the parameter and the known ones', async (t) => {
  const it = await integration(svc, 'bad-query');
  const user = await it.user('q');
  const misspelt = await it.node.get('/api/chats?sise=5', user.jwt);
  refused(t, misspelt, 400, 'VALIDATION_FAILED', 'a misspelt size');
  t.same(misspelt.body.errors, [{ path: '/query/sise', message: 'is not a parameter of this route (known: size, cursor)' }]);
  const none = await it.node.get('/api/users/me?verbose=1', user.jwt);
  refused(t, none, 400, 'VALIDATION_FAILED', 'a route that takes none');
  t.same(none.body.errors, [{ path: '/query/verbose', message: 'is not a parameter of this route (it takes none)' }]);
  const history = await it.node.get(`/api/messages/getMessages/${NIL_UUID}?lastMessage=xyz`, user.jwt);
  refused(t, history, 400, 'VALIDATION_FAILED', 'a cursor that is no message id');
  t.match(history.body.errors[0], { path: '/query/lastMessage' }, 'names the parameter');
  t.notMatch(history.body.errors[0].message, /constant|anyOf/, `says what it must be (${history.body.errors[0].message})`);
  t.equal((await it.node.get('/api/chats?size=5', user.jwt)).status, 200, 'known parameters still work');
});
