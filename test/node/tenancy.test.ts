import t, { type Test } from 'tap';
import { integration, startService, WsClient, type Frame, type HttpResult } from '../helpers/index.ts';
import { assertProblem } from '../helpers/problem.ts';
import { base64urlJson, decodeJwt } from '../helpers/tokens.ts';

// Tenant isolation: users of application A never read, write or receive anything of application B,
// even using B's ids; B's API key cannot act on A either. Two applications on one service.

/** A 4xx problem with `code`, never a 5xx. */
function refused(t: Test, res: HttpResult, status: number, code: string, label: string): void {
  t.ok(res.status < 500, `${label}: not a 5xx (${res.status})`);
  assertProblem(t, res, status, code, label);
}

t.test('tenant isolation between two applications on one service', async (t) => {
  // The attacker's many refused writes would otherwise run into its write budget (RATE_LIMITED) and hide the code under test.
  const svc = await startService({ USER_WRITES_PER_SECOND: '10000' });
  t.teardown(() => svc.stop());
  const A = await integration(svc, 'tenant-a');
  const B = await integration(svc, 'tenant-b');
  t.not(A.appId, B.appId);
  const [a1, a2] = [await A.user('a1'), await A.user('a2')];
  const [b1, b2, b3] = [await B.user('b1'), await B.user('b2'), await B.user('b3')];
  const node = A.node; // the same cluster endpoint serves both applications

  // ---- A: a group of a1 (owner) and a2 with a message ----
  const aGroup = await node.post('/api/chats', { type: 'group', name: 'A team', memberIds: [a2.userId] }, a1.jwt);
  t.equal(aGroup.status, 201);
  const aChat = aGroup.body.chatId as string;
  t.equal((await node.post(`/api/messages/${aChat}`, { content: 'a-hello' }, a2.jwt)).status, 201);

  // ---- B: a group with messages, a reply, a reaction, an edit; and a direct chat ----
  const bGroup = await node.post('/api/chats', { type: 'group', name: 'B team', memberIds: [b2.userId] }, b1.jwt);
  t.equal(bGroup.status, 201);
  const bChat = bGroup.body.chatId as string;
  const m1 = (await node.post(`/api/messages/${bChat}`, { content: 'b-one' }, b1.jwt)).body.message.messageId as string;
  const m2 = (await node.post(`/api/messages/${bChat}`, { content: 'b-two', replyTo: m1 }, b2.jwt)).body.message.messageId as string;
  const m3 = (await node.post(`/api/messages/${bChat}`, { content: 'b-three' }, b1.jwt)).body.message.messageId as string;
  t.equal((await node.post(`/api/messages/${bChat}/${m1}/reactions`, { reaction: '👍' }, b2.jwt)).status, 200);
  t.equal((await node.put(`/api/messages/${bChat}/${m3}`, { content: 'b-three (edited)' }, b1.jwt)).status, 200);
  const bDirectRes = await node.post('/api/chats', { type: 'direct', userId: b2.userId }, b1.jwt);
  const bDirect = bDirectRes.body.chatId as string;
  const d1 = (await node.post(`/api/messages/${bDirect}`, { content: 'b-direct' }, b2.jwt)).body.message.messageId as string;

  /** Everything of B that an attack could change, read from B's side. */
  const snapshotB = async () => {
    const history = async (chatId: string) => (await node.get(`/api/messages/getMessages/${chatId}?size=100`, b1.jwt)).body.messages;
    const messages = await history(bChat); // marks read first, so the members below are stable
    const direct = await history(bDirect);
    const members = (await node.get(`/api/chats/${bChat}/members`, b1.jwt)).body.members;
    const chat = await node.get(`/api/chats/${bChat}`, b2.jwt);
    const users = await Promise.all([b1, b2, b3].map(async (u) => (await B.node.get(`/api/users/${u.userId}`, B.apiKey)).body));
    const chats = await Promise.all([b1, b2, b3].map(async (u) => (await node.get('/api/chats', u.jwt)).body.chats.map((c: any) => [c.chatId, c.lastSeq, c.name ?? null])));
    return { messages, direct, members, chat: { name: chat.body.name, lastSeq: chat.body.lastSeq, type: chat.body.type }, users, chats };
  };
  const before = await snapshotB();
  t.equal(before.messages.length, 3);
  t.equal(before.members.length, 2);
  const bMessageIds = [m1, m2, m3, d1];
  const bIds = [B.appId, bChat, bDirect, b1.userId, b2.userId, b3.userId, ...bMessageIds];

  // ---- sockets: A's users listen (json, msgpack, and one that asks to resume B's chats) ----
  const a1Json = await WsClient.connect(svc.nodeUrl, a1.jwt);
  const a1Pack = await WsClient.connect(svc.nodeUrl, a1.jwt, { encoding: 'msgpack' });
  const a1Resume = await WsClient.connect(svc.nodeUrl, a1.jwt, { resume: { [bChat]: 0, [bDirect]: 0, [aChat]: 0 } });
  const a2Resume = await WsClient.connect(svc.nodeUrl, a2.jwt, { encoding: 'msgpack', resume: { [bChat]: 1 } });
  const bWatch = await WsClient.connect(svc.nodeUrl, b2.jwt);
  const sockets = [a1Json, a1Pack, a1Resume, a2Resume, bWatch];
  t.teardown(() => Promise.all(sockets.map((s) => s.close())));

  const resumed = await a1Resume.waitFor((f) => f.type === 'resumed');
  t.same(Object.keys(resumed.chats), [aChat], "resume names only A's own chat; B's chat ids are ignored");
  t.same(
    a1Resume.frames.filter((f) => f.type === 'message.new').map((f) => [f.chatId, f.message.content]),
    [[aChat, 'a-hello']],
    "resume replays only A's chat",
  );
  const resumed2 = await a2Resume.waitFor((f) => f.type === 'resumed');
  t.same(resumed2.chats, {}, 'resume with only B chat ids: an empty summary');
  t.same(a2Resume.frames.filter((f) => f.type === 'message.new' || f.type === 'resume.gap'), [], 'and no replay');

  await t.test("A's user (A's JWT) is refused everything of B over HTTP", async (t) => {
    const jwt = a1.jwt;
    const cases: [string, () => Promise<HttpResult>, number, string][] = [
      ['getMessages of B’s group', () => node.get(`/api/messages/getMessages/${bChat}`, jwt), 400, 'CHAT_NOT_ACCESSIBLE'],
      ['getMessages of B’s group with B’s cursor', () => node.get(`/api/messages/getMessages/${bChat}?lastMessage=${m3}`, jwt), 400, 'CHAT_NOT_ACCESSIBLE'],
      ['getMessages of B’s direct chat', () => node.get(`/api/messages/getMessages/${bDirect}`, jwt), 400, 'CHAT_NOT_ACCESSIBLE'],
      ['getMessages of A’s chat with B’s message as cursor', () => node.get(`/api/messages/getMessages/${aChat}?lastMessage=${m3}`, jwt), 400, 'VALIDATION_FAILED'],
      ['get B’s group', () => node.get(`/api/chats/${bChat}`, jwt), 404, 'CHAT_NOT_FOUND'],
      ['get B’s direct chat', () => node.get(`/api/chats/${bDirect}`, jwt), 404, 'CHAT_NOT_FOUND'],
      ['list B’s members', () => node.get(`/api/chats/${bChat}/members`, jwt), 404, 'CHAT_NOT_FOUND'],
      ['rename B’s group', () => node.put(`/api/chats/${bChat}`, { name: 'pwned' }, jwt), 404, 'CHAT_NOT_FOUND'],
      ['delete B’s group', () => node.del(`/api/chats/${bChat}`, jwt), 404, 'CHAT_NOT_FOUND'],
      ['delete B’s direct chat', () => node.del(`/api/chats/${bDirect}`, jwt), 404, 'CHAT_NOT_FOUND'],
      ['add myself to B’s group', () => node.post(`/api/chats/${bChat}/members`, { userIds: [a1.userId] }, jwt), 404, 'CHAT_NOT_FOUND'],
      ['add B’s user to B’s group', () => node.post(`/api/chats/${bChat}/members`, { userIds: [b3.userId] }, jwt), 404, 'CHAT_NOT_FOUND'],
      ['set a role in B’s group', () => node.put(`/api/chats/${bChat}/members/${b2.userId}`, { role: 'admin' }, jwt), 404, 'CHAT_NOT_FOUND'],
      ['remove B’s member', () => node.del(`/api/chats/${bChat}/members/${b2.userId}`, jwt), 404, 'CHAT_NOT_FOUND'],
      ['remove myself from B’s group', () => node.del(`/api/chats/${bChat}/members/${a1.userId}`, jwt), 404, 'CHAT_NOT_FOUND'],
      ['leave B’s group', () => node.post(`/api/chats/${bChat}/leave`, undefined, jwt), 404, 'CHAT_NOT_FOUND'],
      ['mark B’s group read', () => node.post(`/api/chats/${bChat}/read`, { seq: 3 }, jwt), 404, 'CHAT_NOT_FOUND'],
      ['send in B’s group', () => node.post(`/api/messages/${bChat}`, { content: 'intruder' }, jwt), 404, 'CHAT_NOT_FOUND'],
      ['send in B’s direct chat', () => node.call('POST', `/api/messages/${bDirect}`, { token: jwt, body: { content: 'intruder' }, headers: { 'idempotency-key': 'k1' } }), 404, 'CHAT_NOT_FOUND'],
      ['edit B’s message', () => node.put(`/api/messages/${bChat}/${m1}`, { content: 'pwned' }, jwt), 404, 'CHAT_NOT_FOUND'],
      ['delete B’s message', () => node.del(`/api/messages/${bChat}/${m1}`, jwt), 404, 'CHAT_NOT_FOUND'],
      ['react to B’s message', () => node.post(`/api/messages/${bChat}/${m1}/reactions`, { reaction: '💀' }, jwt), 404, 'CHAT_NOT_FOUND'],
      ['remove B’s reaction', () => node.del(`/api/messages/${bChat}/${m1}/reactions/${encodeURIComponent('👍')}`, jwt), 404, 'CHAT_NOT_FOUND'],
      ['edit B’s message through A’s chat', () => node.put(`/api/messages/${aChat}/${m1}`, { content: 'pwned' }, jwt), 404, 'MESSAGE_NOT_FOUND'],
      ['delete B’s message through A’s chat (as owner)', () => node.del(`/api/messages/${aChat}/${m1}`, jwt), 404, 'MESSAGE_NOT_FOUND'],
      ['react to B’s message through A’s chat', () => node.post(`/api/messages/${aChat}/${m1}/reactions`, { reaction: '💀' }, jwt), 404, 'MESSAGE_NOT_FOUND'],
      ['remove B’s reaction through A’s chat', () => node.del(`/api/messages/${aChat}/${m1}/reactions/${encodeURIComponent('👍')}`, jwt), 404, 'MESSAGE_NOT_FOUND'],
      ['reply to B’s message in A’s chat', () => node.post(`/api/messages/${aChat}`, { content: 'quoting B', replyTo: m2 }, jwt), 404, 'MESSAGE_NOT_FOUND'],
      ['direct chat with B’s user', () => node.post('/api/chats', { type: 'direct', userId: b1.userId }, jwt), 404, 'USER_NOT_FOUND'],
      ['group with B’s user', () => node.post('/api/chats', { type: 'group', name: 'Mixed', memberIds: [a2.userId, b1.userId] }, jwt), 404, 'USER_NOT_FOUND'],
      ['add B’s user to A’s chat', () => node.post(`/api/chats/${aChat}/members`, { userIds: [b3.userId] }, jwt), 404, 'USER_NOT_FOUND'],
      ['set a role of B’s user in A’s chat', () => node.put(`/api/chats/${aChat}/members/${b1.userId}`, { role: 'admin' }, jwt), 404, 'USER_NOT_FOUND'],
      ['remove B’s user from A’s chat', () => node.del(`/api/chats/${aChat}/members/${b1.userId}`, jwt), 404, 'USER_NOT_FOUND'],
    ];
    for (const [label, run, status, code] of cases) refused(t, await run(), status, code, label);
  });

  await t.test("A's user is refused everything of B over WebSocket (json and msgpack)", async (t) => {
    for (const ws of [a1Json, a1Pack]) {
      const actions: [string, Record<string, unknown>, string][] = [
        ['send in B’s group', { type: 'message.send', chatId: bChat, content: 'intruder', idempotencyKey: 'k1' }, 'CHAT_NOT_FOUND'],
        ['send in B’s direct chat', { type: 'message.send', chatId: bDirect, content: 'intruder' }, 'CHAT_NOT_FOUND'],
        ['edit B’s message', { type: 'message.edit', chatId: bChat, messageId: m1, content: 'pwned' }, 'CHAT_NOT_FOUND'],
        ['delete B’s message', { type: 'message.delete', chatId: bChat, messageId: m1 }, 'CHAT_NOT_FOUND'],
        ['react to B’s message', { type: 'reaction.add', chatId: bChat, messageId: m1, reaction: '💀' }, 'CHAT_NOT_FOUND'],
        ['remove B’s reaction', { type: 'reaction.remove', chatId: bChat, messageId: m1, reaction: '👍' }, 'CHAT_NOT_FOUND'],
        ['mark B’s group read', { type: 'read.mark', chatId: bChat, seq: 3 }, 'CHAT_NOT_FOUND'],
        ['type in B’s group', { type: 'typing.start', chatId: bChat }, 'CHAT_NOT_FOUND'],
        ['stop typing in B’s group', { type: 'typing.stop', chatId: bChat }, 'CHAT_NOT_FOUND'],
        ['reply to B’s message in A’s chat', { type: 'message.send', chatId: aChat, content: 'quoting B', replyTo: m2 }, 'MESSAGE_NOT_FOUND'],
        ['edit B’s message through A’s chat', { type: 'message.edit', chatId: aChat, messageId: m1, content: 'pwned' }, 'MESSAGE_NOT_FOUND'],
        ['delete B’s message through A’s chat', { type: 'message.delete', chatId: aChat, messageId: m1 }, 'MESSAGE_NOT_FOUND'],
        ['react to B’s message through A’s chat', { type: 'reaction.add', chatId: aChat, messageId: m1, reaction: '💀' }, 'MESSAGE_NOT_FOUND'],
      ];
      for (const [label, action, code] of actions) {
        const reply = await ws.request(action);
        t.equal(reply.type, 'error', `${ws.encoding} / ${label}: error frame`);
        t.equal(reply.code, code, `${ws.encoding} / ${label}: ${code}`);
      }
    }
  });

  await t.test("A's API key cannot reach B's users; B's API key cannot reach A's", async (t) => {
    for (const [label, key, victim] of [
      ["A's key on B's user", A.apiKey, b1],
      ["B's key on A's user", B.apiKey, a2],
    ] as const) {
      refused(t, await node.get(`/api/users/${victim.userId}`, key), 404, 'USER_NOT_FOUND', `${label}: get`);
      refused(t, await node.put(`/api/users/${victim.userId}`, { displayName: 'Pwned' }, key), 404, 'USER_NOT_FOUND', `${label}: update`);
      refused(t, await node.del(`/api/users/${victim.userId}`, key), 404, 'USER_NOT_FOUND', `${label}: delete`);
      refused(t, await node.post('/api/users/signin', { userId: victim.userId }, key), 404, 'USER_NOT_FOUND', `${label}: sign in by id`);
      refused(t, await node.post('/api/users/signin', { username: victim.username }, key), 404, 'USER_NOT_FOUND', `${label}: sign in by username`);
    }
    // Usernames are per application: A may register B's username, and gets its own user.
    const twin = await node.post('/api/users', { username: b2.username }, A.apiKey);
    t.equal(twin.status, 201, "A registers a username B already uses");
    t.not(twin.body.userId, b2.userId, 'as a different user');
    const twinSession = await node.post('/api/users/signin', { username: b2.username }, A.apiKey);
    t.equal(twinSession.body.userId, twin.body.userId, "A's key signs in A's user of that name");
    t.equal((await node.post('/api/users/signin', { username: b2.username }, B.apiKey)).body.userId, b2.userId, "B's key still signs in B's");
    refused(t, await node.get(`/api/chats/${bChat}`, twinSession.body.jwt), 404, 'CHAT_NOT_FOUND', "A's namesake cannot see b2's chat");
    refused(t, await node.get(`/api/messages/getMessages/${bDirect}`, twinSession.body.jwt), 400, 'CHAT_NOT_ACCESSIBLE', "A's namesake cannot read b2's direct chat");
    t.same((await node.get('/api/chats', twinSession.body.jwt)).body.chats, [], "A's namesake has no chats");
    t.equal((await node.del(`/api/users/${twin.body.userId}`, A.apiKey)).status, 204, "A deletes its own namesake");
  });

  await t.test("B's user (B's JWT) cannot act on A", async (t) => {
    refused(t, await node.get(`/api/chats/${aChat}`, b1.jwt), 404, 'CHAT_NOT_FOUND', 'get A’s chat');
    refused(t, await node.get(`/api/messages/getMessages/${aChat}`, b1.jwt), 400, 'CHAT_NOT_ACCESSIBLE', 'getMessages of A’s chat');
    refused(t, await node.post(`/api/messages/${aChat}`, { content: 'from B' }, b1.jwt), 404, 'CHAT_NOT_FOUND', 'send in A’s chat');
    refused(t, await node.get(`/api/chats/${aChat}/members`, b1.jwt), 404, 'CHAT_NOT_FOUND', 'A’s members');
    refused(t, await node.post('/api/chats', { type: 'direct', userId: a1.userId }, b1.jwt), 404, 'USER_NOT_FOUND', 'direct chat with A’s user');
    const reply = await bWatch.request({ type: 'message.send', chatId: aChat, content: 'from B' });
    t.equal(reply.code, 'CHAT_NOT_FOUND', 'WebSocket send in A’s chat');
  });

  await t.test('tokens cannot be moved between applications', async (t) => {
    // A's JWT re-labelled as B's application (or as B's user): the signature no longer matches.
    const [header, , signature] = a1.jwt.split('.');
    const { payload } = decodeJwt(a1.jwt);
    t.equal(payload.app, A.appId);
    const asB = `${header}.${base64urlJson({ ...payload, app: B.appId })}.${signature}`;
    const asB1 = `${header}.${base64urlJson({ ...payload, app: B.appId, sub: b1.userId })}.${signature}`;
    refused(t, await node.get(`/api/chats/${bChat}`, asB), 401, 'TOKEN_INVALID', 'JWT re-labelled with B’s app');
    refused(t, await node.get('/api/chats', asB1), 401, 'TOKEN_INVALID', 'JWT re-labelled as B’s user');
    await t.rejects(WsClient.connect(svc.nodeUrl, asB1), /401/, 'WebSocket upgrade with a re-labelled JWT is refused');

    // Refresh tokens name their application; naming A's instead finds nothing, and does not burn B's.
    const secret = b1.refreshToken.slice(b1.refreshToken.indexOf('.') + 1);
    t.ok(b1.refreshToken.startsWith(`urt_${B.appId}.`), "B's refresh token names B's application");
    refused(t, await node.post('/api/users/refresh', { refreshToken: `urt_${A.appId}.${secret}` }), 401, 'REFRESH_TOKEN_INVALID', "B's refresh token re-labelled as A's");
    // Presented next to A's API key (refresh takes no credential), it still yields B's user only.
    const refreshed = await node.call('POST', '/api/users/refresh', { token: A.apiKey, body: { refreshToken: b1.refreshToken } });
    t.equal(refreshed.status, 200, "B's refresh token still works: the re-labelled attempt did not end the sign-in");
    t.equal(refreshed.body.userId, b1.userId);
    t.equal(decodeJwt(refreshed.body.jwt).payload.app, B.appId, 'the new JWT is for B’s application');
    refused(t, await node.get(`/api/chats/${aChat}`, refreshed.body.jwt), 404, 'CHAT_NOT_FOUND', 'and cannot see A’s chat');
    t.equal((await node.get(`/api/chats/${bChat}`, refreshed.body.jwt)).status, 200, 'but sees B’s');
  });

  await t.test("nothing of B changed, and B's sockets saw nothing of the attempts", async (t) => {
    const after = await snapshotB();
    t.same(after, before, 'B’s messages, direct chat, members, chat, users and chat lists are unchanged');
    t.same(after.messages.map((m: any) => [m.content, m.edited, m.deleted, m.reactions.map((r: any) => r.reaction)]), [
      ['b-three (edited)', true, false, []],
      ['b-two', false, false, []],
      ['b-one', false, false, ['👍']],
    ]);
    t.same((await node.get('/api/chats', a1.jwt)).body.chats.map((c: any) => c.chatId), [aChat], "a1's chats: only A's (no group or direct chat was created)");
    t.same((await node.get(`/api/chats/${aChat}/members`, a1.jwt)).body.members.map((m: any) => m.userId).sort(), [a1.userId, a2.userId].sort(), "A's chat has only A's users");
    t.same((await node.get(`/api/messages/getMessages/${aChat}`, a2.jwt)).body.messages.map((m: any) => m.content), ['a-hello'], "no attempt left a message in A's chat");
    const ping = await bWatch.request({ type: 'ping' });
    t.equal(ping.type, 'ack');
    t.same(bWatch.frames.filter((f) => f.chatId !== undefined || f.type.startsWith('presence.')), [], 'b2 received no chat or presence event while A tried');
  });

  await t.test("A's sockets receive nothing while B's users chat", async (t) => {
    const b1Ws = await WsClient.connect(svc.nodeUrl, b1.jwt, { encoding: 'msgpack' });
    sockets.push(b1Ws);
    await bWatch.waitFor((f) => f.type === 'presence.online' && f.userId === b1.userId);
    const ack = await b1Ws.request({ type: 'message.send', chatId: bChat, content: 'b-live' });
    t.equal(ack.type, 'ack');
    const live = ack.result.message.messageId as string;
    bIds.push(live);
    t.equal((await node.put(`/api/messages/${bChat}/${m2}`, { content: 'b-two (edited)' }, b2.jwt)).status, 200);
    t.equal((await node.post(`/api/messages/${bChat}/${live}/reactions`, { reaction: '🎉' }, b2.jwt)).status, 200);
    t.equal((await b1Ws.request({ type: 'typing.start', chatId: bChat })).type, 'ack');
    t.equal((await node.post(`/api/chats/${bChat}/read`, { seq: 4 }, b2.jwt)).status, 200);
    t.equal((await node.put(`/api/chats/${bChat}`, { name: 'B renamed' }, b1.jwt)).status, 200);
    t.equal((await node.post(`/api/chats/${bChat}/members`, { userIds: [b3.userId] }, b1.jwt)).status, 200);
    const b3Ws = await WsClient.connect(svc.nodeUrl, b3.jwt);
    sockets.push(b3Ws);
    await bWatch.waitFor((f) => f.type === 'presence.online' && f.userId === b3.userId);
    t.equal((await node.del(`/api/messages/${bChat}/${m1}`, b1.jwt)).status, 200);
    const direct = await node.post(`/api/messages/${bDirect}`, { content: 'b-direct-live' }, b1.jwt);
    bIds.push(direct.body.message.messageId);
    const final = await b1Ws.request({ type: 'message.send', chatId: bChat, content: 'b-final' });
    bIds.push(final.result.message.messageId);
    // B's own member saw all of it: every one of these events has been published.
    const expected: [string, (f: Frame) => boolean][] = [
      ['message.new b-live', (f) => f.type === 'message.new' && f.message.content === 'b-live'],
      ['message.edited', (f) => f.type === 'message.edited' && f.message.messageId === m2],
      ['reaction.added', (f) => f.type === 'reaction.added' && f.reaction.reaction === '🎉'],
      ['typing.started', (f) => f.type === 'typing.started' && f.userId === b1.userId],
      ['read.updated', (f) => f.type === 'read.updated' && f.userId === b2.userId && f.seq === 4],
      ['chat.updated', (f) => f.type === 'chat.updated' && f.chat.name === 'B renamed'],
      ['membership.changed', (f) => f.type === 'membership.changed' && f.userId === b3.userId],
      ['message.deleted', (f) => f.type === 'message.deleted' && f.message.messageId === m1],
      ['direct message.new', (f) => f.type === 'message.new' && f.chatId === bDirect && f.message.content === 'b-direct-live'],
      ['message.new b-final', (f) => f.type === 'message.new' && f.message.content === 'b-final'],
    ];
    for (const [label, predicate] of expected) t.ok(await bWatch.waitFor(predicate), `B's member received ${label}`);
    await b3Ws.waitFor((f) => f.type === 'message.new' && f.message.content === 'b-final');

    // Marker: an event of A's own chat, after all of B's. Each A socket gets it; before it, nothing of B.
    t.equal((await node.post(`/api/messages/${aChat}`, { content: 'a-marker' }, a2.jwt)).status, 201);
    for (const ws of [a1Json, a1Pack, a1Resume, a2Resume]) {
      await ws.waitFor((f) => f.type === 'message.new' && f.message.content === 'a-marker');
      const label = `${ws.encoding} socket of ${ws === a2Resume ? 'a2' : 'a1'}${ws === a1Resume || ws === a2Resume ? ' (resumed with B ids)' : ''}`;
      const foreign = ws.frames.filter((f) => f.chatId !== undefined && f.chatId !== aChat);
      t.same(foreign, [], `${label}: no frame of another chat`);
      const dump = JSON.stringify(ws.frames);
      const leaked = bIds.filter((id) => dump.includes(id));
      t.same(leaked, [], `${label}: no id of B anywhere in its frames`);
      t.notOk(/b-(one|two|three|live|final|direct)|B team|B renamed/.test(dump), `${label}: no content of B`);
      t.ok(ws.frames.some((f) => f.type === 'message.new' && f.chatId === aChat && f.message.content === 'a-marker'), `${label}: A's own events do arrive`);
    }
    // Positive control: the same checks do see B's ids and content on B's own member's socket.
    const bDump = JSON.stringify(bWatch.frames);
    t.ok(bIds.filter((id) => bDump.includes(id)).length >= 3 && /b-final/.test(bDump), 'the leak checks are not vacuous');
    t.equal((await node.get('/healthz')).status, 200);
  });
});
