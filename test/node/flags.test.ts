import t from 'tap';
import WebSocket from 'ws';
import { ChatServer } from 'chat-service/server';
import { ChatClient } from 'chat-service/client';
import { integration, startService, WsClient } from '../helpers/index.ts';

// README, "Moderation": members flag a message once each; the backend lists open flags newest
// first and resolves them (dismiss, delete, ban); enough distinct flaggers (the application's
// threshold) hide the message pending review.
const svc = await startService();
t.teardown(() => svc.stop());

async function room(prefix: string) {
  const it = await integration(svc, prefix);
  const [author, a, b, c] = [await it.user('author'), await it.user('a'), await it.user('b'), await it.user('c')];
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'flags', memberIds: [a.userId, b.userId, c.userId] }, author.jwt)).body.chatId as string;
  const say = async (content: string) => (await it.node.post(`/api/messages/${chatId}`, { content }, author.jwt)).body.message.messageId as string;
  const flag = (who: { jwt: string }, messageId: string, reason = 'spam') => it.node.post(`/api/messages/${chatId}/${messageId}/flags`, { reason }, who.jwt);
  return { it, author, a, b, c, chatId, say, flag };
}

t.test('a member flags a message once; the backend sees open flags newest first, paged', async (t) => {
  const { it, author, a, b, chatId, say, flag } = await room('queue');
  const first = await say('buy cheap watches');
  const second = await say('more watches');
  const flagged = await flag(a, first, 'spam');
  t.equal(flagged.status, 201);
  t.match(flagged.body, { flagId: String, chatId, messageId: first, senderId: author.userId, flaggedBy: a.userId, reason: 'spam', createdAt: String, messageHidden: false });
  const again = await flag(a, first, 'really spam');
  t.equal(again.status, 409, 'once per user per message');
  t.equal(again.body.code, 'ALREADY_FLAGGED');
  t.equal((await flag(author, first)).body.code, 'NOT_ALLOWED', 'not one’s own message');
  t.equal((await flag(a, crypto.randomUUID())).body.code, 'MESSAGE_NOT_FOUND');
  const outsider = await it.user('outsider');
  t.equal((await flag(outsider, first)).status, 404, 'a non-member does not see the chat');
  t.equal((await it.node.post(`/api/messages/${chatId}/${first}/flags`, { reason: '' }, a.jwt)).status, 400, 'a reason is required');
  t.equal((await flag(b, second, 'also spam')).status, 201);

  const page1 = await it.node.get('/api/moderation/flags?size=1', it.apiKey);
  t.equal(page1.status, 200);
  t.match(page1.body.flags, [{ messageId: second, flaggedBy: b.userId, message: { content: 'more watches', hidden: false, deleted: false } }], 'newest first, with its message');
  const page2 = await it.node.get(`/api/moderation/flags?size=1&cursor=${page1.body.nextCursor}`, it.apiKey);
  t.match(page2.body.flags, [{ messageId: first, flaggedBy: a.userId }]);
  t.notOk(page2.body.nextCursor, 'two open flags in all');
  t.equal((await it.node.get('/api/moderation/flags', a.jwt)).status, 401, 'for the backend only');
});

t.test('enough distinct flaggers hide a message pending review; dismissing restores it', async (t) => {
  const { it, a, b, c, chatId, say, flag } = await room('hide');
  t.same((await it.node.get('/api/moderation/settings', it.apiKey)).body, { flagHideThreshold: 0 }, 'never hidden by default');
  t.equal((await it.node.put('/api/moderation/settings', { flagHideThreshold: 101 }, it.apiKey)).status, 400, 'at most 100');
  t.same((await it.node.put('/api/moderation/settings', { flagHideThreshold: 2 }, it.apiKey)).body, { flagHideThreshold: 2 });
  const messageId = await say('something rude');
  const ws = await WsClient.connect(svc.nodeUrl, c.jwt);
  t.teardown(() => ws.close());

  t.equal((await flag(a, messageId)).body.messageHidden, false, 'one flag: still shown');
  t.equal((await flag(b, messageId)).body.messageHidden, true, 'the second distinct flagger hides it');
  const hidden = await ws.waitFor((f) => f.type === 'message.hidden');
  t.match(hidden.message, { messageId, content: '', hidden: true }, 'members are told, without the content');
  const history = (await it.node.get(`/api/messages/getMessages/${chatId}`, c.jwt)).body.messages;
  t.match(history[0], { messageId, content: '', hidden: true }, 'history shows it hidden');
  const queued = (await it.node.get('/api/moderation/flags', it.apiKey)).body.flags;
  t.equal(queued.length, 2);
  t.match(queued[0].message, { content: 'something rude', hidden: true }, 'the backend still sees the content');

  const resolved = await it.node.post(`/api/moderation/flags/${queued[1].flagId}/resolve`, { action: 'dismiss', reason: 'banter' }, it.apiKey);
  t.equal(resolved.status, 200);
  t.equal(resolved.body.flags.length, 2, 'every open flag of the message is resolved');
  const restored = await ws.waitFor((f) => f.type === 'message.restored');
  t.match(restored.message, { messageId, content: 'something rude' });
  t.notOk('hidden' in restored.message);
  t.same((await it.node.get('/api/moderation/flags', it.apiKey)).body.flags, [], 'the queue is empty');
  const gone = await it.node.post(`/api/moderation/flags/${queued[0].flagId}/resolve`, { action: 'dismiss' }, it.apiKey);
  t.equal(gone.status, 404);
  t.equal(gone.body.code, 'FLAG_NOT_FOUND');
  t.equal((await flag(a, messageId)).body.code, 'ALREADY_FLAGGED', 'a resolved flag still counts as the user’s one flag');
  t.equal((await flag(c, messageId)).body.messageHidden, false, 'a new flagger alone does not hide it again');
  t.match((await it.node.get('/api/moderation/actions?size=1', it.apiKey)).body.actions, [{ action: 'flag.dismissed', chatId, messageId, reason: 'banter' }]);
});

t.test('resolving deletes the message or bans its sender', async (t) => {
  const { it, author, a, b, chatId, say, flag } = await room('resolve');
  const server = new ChatServer({ baseUrl: svc.nodeUrl, apiKey: it.apiKey });
  const client = new ChatClient({ baseUrl: svc.nodeUrl, WebSocket: WebSocket as never });
  client.setAuth({ jwt: a.jwt, refreshToken: a.refreshToken, userId: a.userId });
  const doomed = await say('delete me');
  const flagged = await client.flagMessage(chatId, doomed, 'gore');
  t.match(flagged, { messageId: doomed, flaggedBy: a.userId, messageHidden: false }, 'ChatClient.flagMessage');
  const listed = await server.listFlags();
  t.same(listed.flags.map((f) => f.flagId), [flagged.flagId], 'ChatServer.listFlags');
  t.match(await server.resolveFlag(flagged.flagId, { action: 'delete' }), { action: 'delete', flags: [{ flagId: flagged.flagId }] });
  const history = (await it.node.get(`/api/messages/getMessages/${chatId}`, a.jwt)).body.messages;
  t.match(history.find((m: { messageId: string }) => m.messageId === doomed), { deleted: true, content: '' }, 'the message is deleted');

  const worse = await say('worse');
  const f2 = (await flag(b, worse, 'threats')).body;
  const expiresAt = new Date(Date.now() + 60_000).toISOString();
  t.match(await server.resolveFlag(f2.flagId, { action: 'ban', reason: 'threats', expiresAt }), { action: 'ban' });
  const refused = await it.node.post(`/api/messages/${chatId}`, { content: 'hello?' }, author.jwt);
  t.equal(refused.body.code, 'USER_BANNED', 'the sender is banned from the application');
  t.match((await server.listBans()).bans, [{ userId: author.userId, reason: 'threats', expiresAt }]);
  t.match((await server.listModerationActions({ size: 1 })).actions, [{ action: 'flag.banned', userId: author.userId, chatId, messageId: worse }]);
  const bad = await it.node.post(`/api/moderation/flags/${f2.flagId}/resolve`, { action: 'dismiss', expiresAt }, it.apiKey);
  t.equal(bad.status, 400, 'expiresAt only with ban');
  t.equal((await it.node.post(`/api/moderation/flags/${f2.flagId}/resolve`, { action: 'shrug' }, it.apiKey)).status, 400, 'an unknown action');
  t.same(await server.setModerationSettings({ flagHideThreshold: 3 }), { flagHideThreshold: 3 });
  t.same(await server.getModerationSettings(), { flagHideThreshold: 3 });
});
