import t from 'tap';
import WebSocket from 'ws';
import { ChatServer, ChatApiError as ServerApiError } from 'chat-service/server';
import { ChatClient } from 'chat-service/client';
import { integration, socketFate, startService, WsClient } from '../helpers/index.ts';

// README, "Moderation": an application-wide ban closes the user's sockets at once (4502), refuses
// its sign-in, refresh, requests and new sockets (403 USER_BANNED), and lifts by itself at its
// expiry or when lifted; every ban and unban is recorded.
const svc = await startService();
t.teardown(() => svc.stop());

const fateOf = (jwt: string) => socketFate(svc.nodeUrl, jwt);

t.test('a ban closes the user’s socket with 4502 and refuses sign-in, refresh, requests and sockets; unban restores them', async (t) => {
  const it = await integration(svc, 'moderated');
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chatId = (await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt)).body.chatId as string;
  const ws = await WsClient.connect(svc.nodeUrl, alice.jwt);
  t.teardown(() => ws.close());
  t.equal((await ws.request({ type: 'message.send', chatId, content: 'before' })).type, 'ack', 'working before the ban');

  const banned = await it.node.post('/api/moderation/bans', { userId: alice.userId, reason: 'spam links' }, it.apiKey);
  const bannedAt = Date.now();
  t.equal(banned.status, 201);
  t.match(banned.body, { userId: alice.userId, reason: 'spam links', createdAt: String, bannedBy: `apiKey:${it.keyId}` });
  t.notOk('expiresAt' in banned.body, 'no expiry: until lifted');
  const closed = await ws.waitClosed();
  t.equal(closed.code, 4502, 'the open socket is closed with 4502');
  t.match(JSON.parse(closed.reason), { reason: 'user banned', reconnect: 'never' });
  t.ok(Date.now() - bannedAt < 1000, `within a second (${Date.now() - bannedAt} ms)`);

  const send = await it.node.post(`/api/messages/${chatId}`, { content: 'after' }, alice.jwt);
  t.equal(send.status, 403, 'a send with the still unexpired JWT is refused');
  t.equal(send.body.code, 'USER_BANNED');
  t.match(send.body.detail, /spam links/, 'the reason is in the refusal');
  t.equal((await it.node.get('/api/chats', alice.jwt)).body.code, 'USER_BANNED', 'and every other request');
  const signIn = await it.node.post('/api/users/signin', { userId: alice.userId }, it.apiKey);
  t.equal(signIn.status, 403, 'sign-in is refused');
  t.equal(signIn.body.code, 'USER_BANNED');
  const refresh = await it.node.post('/api/users/refresh', { refreshToken: alice.refreshToken });
  t.equal(refresh.status, 403, 'refresh is refused');
  t.equal(refresh.body.code, 'USER_BANNED');
  t.equal(await fateOf(alice.jwt), 'closed 4502', 'a new socket is closed with 4502');
  t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'bob is fine' }, bob.jwt)).status, 201, 'other users are unaffected');

  t.equal((await it.node.del(`/api/moderation/bans/${alice.userId}`, it.apiKey)).status, 204, 'unbanned');
  t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'back' }, alice.jwt)).status, 201, 'the same JWT sends again');
  t.equal((await it.node.post('/api/users/signin', { userId: alice.userId }, it.apiKey)).status, 200, 'sign-in works again');
  t.equal(await fateOf(alice.jwt), 'ready', 'and sockets');
  const again = await it.node.del(`/api/moderation/bans/${alice.userId}`, it.apiKey);
  t.equal(again.status, 404, 'nothing left to lift');
  t.equal(again.body.code, 'BAN_NOT_FOUND');
});

t.test('a 2-second ban lifts by itself', async (t) => {
  const it = await integration(svc, 'timed');
  const carol = await it.user('carol');
  const expiresAt = new Date(Date.now() + 2000).toISOString();
  t.equal((await it.node.post('/api/moderation/bans', { userId: carol.userId, expiresAt }, it.apiKey)).body.expiresAt, expiresAt);
  const refused = await it.node.get('/api/chats', carol.jwt);
  t.equal(refused.body.code, 'USER_BANNED', 'refused while in force');
  t.match(refused.body.detail, expiresAt, 'the refusal says until when');
  await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 100));
  t.equal((await it.node.get('/api/chats', carol.jwt)).status, 200, 'served again just after its expiry');
  t.equal((await it.node.post('/api/users/signin', { userId: carol.userId }, it.apiKey)).status, 200);
  t.same((await it.node.get('/api/moderation/bans', it.apiKey)).body.bans, [], 'no longer listed');
});

t.test('bad ban requests get a 4xx naming the field', async (t) => {
  const it = await integration(svc, 'bad-bans');
  const dave = await it.user('dave');
  const past = await it.node.post('/api/moderation/bans', { userId: dave.userId, expiresAt: new Date(Date.now() - 1000).toISOString() }, it.apiKey);
  t.equal(past.status, 400);
  t.same(past.body.errors, [{ path: '/body/expiresAt', message: 'must be a time in the future' }]);
  const nobody = await it.node.post('/api/moderation/bans', { userId: crypto.randomUUID() }, it.apiKey);
  t.equal(nobody.status, 404);
  t.equal(nobody.body.code, 'USER_NOT_FOUND');
  const extra = await it.node.post('/api/moderation/bans', { userId: dave.userId, until: 'ever' }, it.apiKey);
  t.equal(extra.status, 400, 'an unknown field');
  t.equal((await it.node.get('/api/moderation/bans?cursor=not-a-user', it.apiKey)).status, 400, 'a cursor that is not a user id');
  t.equal((await it.node.get('/api/moderation/actions?size=101', it.apiKey)).status, 400, 'a size past 100');
  t.equal((await it.node.post('/api/moderation/bans', { userId: dave.userId }, dave.jwt)).status, 401, 'a user JWT cannot ban');
  t.equal((await it.node.get(`/api/chats`, dave.jwt)).status, 200, 'and nothing was banned');
});

t.test('bans are listed a page at a time; every action is recorded newest first, with who, what, when and why', async (t) => {
  const it = await integration(svc, 'listed');
  const users = await Promise.all(Array.from({ length: 5 }, (_, i) => it.user(`listed${i}`)));
  for (const u of users) t.equal((await it.node.post('/api/moderation/bans', { userId: u.userId, reason: `r ${u.userId}` }, it.apiKey)).status, 201);
  await it.node.del(`/api/moderation/bans/${users[0]!.userId}`, it.apiKey);
  const first = await it.node.get('/api/moderation/bans?size=3', it.apiKey);
  const rest = await it.node.get(`/api/moderation/bans?size=3&cursor=${first.body.nextCursor}`, it.apiKey);
  const listed = [...first.body.bans, ...rest.body.bans].map((b: { userId: string }) => b.userId);
  t.same(listed, users.slice(1).map((u) => u.userId).sort(), 'the four in force, by user id, over two pages');
  t.notOk('nextCursor' in rest.body, 'the last page has no cursor');
  const actions = (await it.node.get('/api/moderation/actions', it.apiKey)).body.actions as { actionId: string; action: string; userId: string; by: string; reason?: string; at: string }[];
  t.same(actions.map((a) => a.action), ['user.unbanned', ...Array(5).fill('user.banned')], 'newest first');
  t.same(actions[0], { actionId: actions[0]!.actionId, at: actions[0]!.at, action: 'user.unbanned', userId: users[0]!.userId, by: `apiKey:${it.keyId}` });
  t.equal(actions.at(-1)!.reason, `r ${users[0]!.userId}`, 'with its reason');
  const paged = await it.node.get(`/api/moderation/actions?size=2&cursor=${(await it.node.get('/api/moderation/actions?size=2', it.apiKey)).body.nextCursor}`, it.apiKey);
  t.same(paged.body.actions.map((a: { actionId: string }) => a.actionId), actions.slice(2, 4).map((a) => a.actionId), 'the next page of two');
});

t.test('the SDK: ChatServer bans, lists and unbans; a banned ChatClient is signed out for good', async (t) => {
  const it = await integration(svc, 'sdk-moderation');
  const server = new ChatServer({ baseUrl: svc.nodeUrl, apiKey: it.apiKey });
  const erin = await it.user('erin');
  const client = new ChatClient({ baseUrl: svc.nodeUrl, WebSocket: WebSocket as never });
  client.setAuth({ jwt: erin.jwt, refreshToken: erin.refreshToken, userId: erin.userId });
  await client.connect();
  const statuses: string[] = [];
  const closed = new Promise<void>((resolve) => client.on('status', (s) => (statuses.push(s), s === 'closed' && resolve())));
  const ban = await server.banUser({ userId: erin.userId, reason: 'abuse' });
  t.match(ban, { userId: erin.userId, reason: 'abuse', bannedBy: `apiKey:${it.keyId}` });
  await closed;
  await new Promise((resolve) => setTimeout(resolve, 1000));
  t.same(statuses, ['closed'], 'the client closes and does not reconnect (4502: never)');
  const refusedSend = await client.getMessages(crypto.randomUUID()).catch((e: unknown) => e);
  t.ok(refusedSend instanceof Error && (refusedSend as { code?: string }).code === 'USER_BANNED', 'its requests throw USER_BANNED');
  t.same((await server.listBans()).bans.map((b) => b.userId), [erin.userId]);
  const refused = await server.signIn({ userId: erin.userId }).catch((e: unknown) => e);
  t.ok(refused instanceof ServerApiError && refused.code === 'USER_BANNED', 'signIn throws USER_BANNED');
  await server.unbanUser(erin.userId);
  t.same((await server.listModerationActions({ size: 2 })).actions.map((a) => a.action), ['user.unbanned', 'user.banned']);
  t.ok((await server.signIn({ userId: erin.userId })).jwt, 'signed in again');
  t.same((await server.getBlocklist()).entries, [], 'no blocklist yet');
  t.same((await server.setBlocklist([{ text: 'spam', action: 'block' }])).entries, [{ text: 'spam', action: 'block' }]);
  t.same((await server.getBlocklist()).entries, [{ text: 'spam', action: 'block' }], 'read back');
  t.equal((await server.listModerationActions({ size: 1 })).actions[0]!.action, 'blocklist.updated');
  client.close();
});

t.test('user blocks: no new direct chat, no send into the existing one either way (REST and WebSocket); unblock restores', async (t) => {
  const it = await integration(svc, 'blocks');
  const [ann, ben, cat] = [await it.user('ann'), await it.user('ben'), await it.user('cat')];
  const chatId = (await it.node.post('/api/chats', { type: 'direct', userId: ben.userId }, ann.jwt)).body.chatId as string;
  const benWs = await WsClient.connect(svc.nodeUrl, ben.jwt);
  t.teardown(() => benWs.close());

  const blocked = await it.node.post('/api/users/me/blocks', { userId: ben.userId }, ann.jwt);
  t.equal(blocked.status, 201);
  t.match(blocked.body, { userId: ben.userId, blockedAt: String });
  const blockedAgain = await it.node.post('/api/users/me/blocks', { userId: ben.userId }, ann.jwt);
  t.same([blockedAgain.status, blockedAgain.body], [200, blocked.body], 'blocking again: 200, the first block unchanged');
  const fromBen = await it.node.post(`/api/messages/${chatId}`, { content: 'hi?' }, ben.jwt);
  t.equal(fromBen.status, 403, 'the blocked user cannot send into the direct chat');
  t.equal(fromBen.body.code, 'USER_BLOCKED');
  const overWs = await benWs.request({ type: 'message.send', chatId, content: 'over ws' });
  t.match(overWs, { type: 'error', code: 'USER_BLOCKED' }, 'nor over WebSocket');
  const fromAnn = await it.node.post(`/api/messages/${chatId}`, { content: 'hello' }, ann.jwt);
  t.equal(fromAnn.body.code, 'USER_BLOCKED', 'nor the blocker, until it unblocks');
  t.match(fromAnn.body.detail, /unblock/);
  t.equal((await it.node.post('/api/chats', { type: 'direct', userId: ann.userId }, cat.jwt)).status, 201, 'other pairs are unaffected');
  await it.node.del(`/api/chats/${chatId}`, ann.jwt);
  const again = await it.node.post('/api/chats', { type: 'direct', userId: ann.userId }, ben.jwt);
  t.equal(again.status, 403, 'no new direct chat between them');
  t.equal(again.body.code, 'USER_BLOCKED');
  t.same((await it.node.get('/api/users/me/blocks', ann.jwt)).body, { blocks: [{ userId: ben.userId, blockedAt: blocked.body.blockedAt }] }, 'listed');
  t.same((await it.node.get('/api/users/me/blocks', ben.jwt)).body, { blocks: [] }, "not in the blocked user's list");

  t.equal((await it.node.del(`/api/users/me/blocks/${ben.userId}`, ann.jwt)).status, 204, 'unblocked');
  const fresh = await it.node.post('/api/chats', { type: 'direct', userId: ann.userId }, ben.jwt);
  t.equal(fresh.status, 201, 'a direct chat again');
  t.equal((await it.node.post(`/api/messages/${fresh.body.chatId}`, { content: 'hi again' }, ben.jwt)).status, 201, 'and sends');
  t.equal((await it.node.del(`/api/users/me/blocks/${ben.userId}`, ann.jwt)).body.code, 'BLOCK_NOT_FOUND');
  const self = await it.node.post('/api/users/me/blocks', { userId: ann.userId }, ann.jwt);
  t.same(self.body.errors, [{ path: '/body/userId', message: 'is yourself' }], 'blocking yourself names the field');
  t.equal((await it.node.post('/api/users/me/blocks', { userId: crypto.randomUUID() }, ann.jwt)).body.code, 'USER_NOT_FOUND');
  t.equal((await it.node.post('/api/users/me/blocks', { userId: ben.userId }, it.apiKey)).status, 401, 'an API key is no user');
});

t.test('the SDK: ChatClient blocks, lists and unblocks', async (t) => {
  const it = await integration(svc, 'sdk-blocks');
  const [fay, gus] = [await it.user('fay'), await it.user('gus')];
  const client = new ChatClient({ baseUrl: svc.nodeUrl, WebSocket: WebSocket as never });
  client.setAuth({ jwt: fay.jwt, refreshToken: fay.refreshToken, userId: fay.userId });
  t.match(await client.blockUser(gus.userId), { userId: gus.userId });
  t.same((await client.listBlocks()).blocks.map((b) => b.userId), [gus.userId]);
  const refused = await client.directChat(gus.userId).catch((e: unknown) => e);
  t.equal((refused as { code?: string }).code, 'USER_BLOCKED');
  await client.unblockUser(gus.userId);
  t.ok((await client.directChat(gus.userId)).chatId, 'a direct chat once unblocked');
  client.close();
});

t.test('the blocklist: a block entry refuses sends and edits (REST and WebSocket), a mask entry stars the words out; set by API key', async (t) => {
  const it = await integration(svc, 'blocklist');
  const [hal, ida] = [await it.user('hal'), await it.user('ida')];
  const chatId = (await it.node.post('/api/chats', { type: 'direct', userId: ida.userId }, hal.jwt)).body.chatId as string;
  const ws = await WsClient.connect(svc.nodeUrl, hal.jwt);
  t.teardown(() => ws.close());
  t.same((await it.node.get('/api/moderation/blocklist', it.apiKey)).body, { entries: [] }, 'none until set');
  const entries = [{ text: 'Crypto Scam', action: 'block' }, { text: 'darn', action: 'mask' }];
  const set = await it.node.put('/api/moderation/blocklist', { entries }, it.apiKey);
  t.equal(set.status, 200);
  t.same(set.body.entries, entries);

  const refused = await it.node.post(`/api/messages/${chatId}`, { content: 'join this crypto  scam' }, hal.jwt);
  t.equal(refused.status, 400, 'a send with a block entry is refused');
  t.equal(refused.body.code, 'CONTENT_BLOCKED');
  t.match(await ws.request({ type: 'message.send', chatId, content: 'CRYPTO SCAM!!' }), { type: 'error', code: 'CONTENT_BLOCKED' }, 'over WebSocket too');
  const masked = await it.node.post(`/api/messages/${chatId}`, { content: 'Därn, it is late' }, hal.jwt);
  t.equal(masked.status, 201);
  t.equal(masked.body.message.content, '****, it is late', 'a mask entry is starred out, diacritics and case aside');
  const messageId = masked.body.message.messageId as string;
  t.equal((await it.node.put(`/api/messages/${chatId}/${messageId}`, { content: 'a crypto scam' }, hal.jwt)).body.code, 'CONTENT_BLOCKED', 'an edit too');
  t.equal((await it.node.put(`/api/messages/${chatId}/${messageId}`, { content: 'darn darn' }, hal.jwt)).body.message.content, '**** ****', 'an edit is masked');
  const stored = await it.node.get(`/api/messages/getMessages/${chatId}`, ida.jwt);
  t.same(stored.body.messages.map((m: { content: string }) => m.content), ['**** ****'], 'only the masked text was ever stored');

  const empty = await it.node.put('/api/moderation/blocklist', { entries: [{ text: 'ok', action: 'mask' }, { text: '\u0301\u0302', action: 'block' }] }, it.apiKey);
  t.equal(empty.status, 400);
  t.same(empty.body.errors.map((e: { path: string }) => e.path), ['/body/entries/1/text'], 'an entry that folds to nothing names its index');
  t.equal((await it.node.put('/api/moderation/blocklist', { entries: [{ text: 'x', action: 'erase' }] }, it.apiKey)).status, 400, 'an unknown action');
  const tooMany = await it.node.put('/api/moderation/blocklist', { entries: Array.from({ length: 10_001 }, (_, i) => ({ text: `w${i}`, action: 'block' })) }, it.apiKey);
  t.equal(tooMany.status, 400, 'more than 10,000 entries');
  const big = await it.node.put('/api/moderation/blocklist', { entries: Array.from({ length: 10_000 }, (_, i) => ({ text: `word number ${i}`, action: 'block' })) }, it.apiKey);
  t.equal(big.status, 200, `10,000 entries in one body (${JSON.stringify(big.body).length} bytes)`);
  t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'say word number 9999 twice' }, hal.jwt)).body.code, 'CONTENT_BLOCKED', 'the new list applies at once');
  t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'darn' }, hal.jwt)).body.message.content, 'darn', 'and the old one no longer');
  const log = (await it.node.get('/api/moderation/actions', it.apiKey)).body.actions;
  t.match(log[0], { action: 'blocklist.updated', by: `apiKey:${it.keyId}`, reason: '10000 entries' }, 'each change is in the moderation log');
});
