import t from 'tap';
import WebSocket from 'ws';
import { ChatServer } from 'chat-service/server';
import { ChatClient, ChatApiError } from 'chat-service/client';
import { integration, startService, WsClient } from '../helpers/index.ts';

// README, "Moderation": mutes and bans within one chat, by the backend (API key) or a group's
// owner or admin (JWT); a muted member reads and receives but cannot send, edit, react or type;
// a chat ban removes the member and keeps it out until lifted; both announced to the chat.
const svc = await startService();
t.teardown(() => svc.stop());

async function group(prefix: string) {
  const it = await integration(svc, prefix);
  const [owner, admin, member, other] = [await it.user('owner'), await it.user('admin'), await it.user('member'), await it.user('other')];
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'moderated', memberIds: [admin.userId, member.userId, other.userId] }, owner.jwt)).body.chatId as string;
  if (!chatId) throw new Error('no group');
  t.equal((await it.node.put(`/api/chats/${chatId}/members/${admin.userId}`, { role: 'admin' }, owner.jwt)).status, 200);
  return { it, owner, admin, member, other, chatId };
}

t.test('a muted member reads and receives but cannot send, edit, react or type; unmuting restores it (REST and WebSocket)', async (t) => {
  const { it, owner, admin, member, chatId } = await group('muted');
  const before = (await it.node.post(`/api/messages/${chatId}`, { content: 'my message' }, member.jwt)).body.message;
  const ownerWs = await WsClient.connect(svc.nodeUrl, owner.jwt);
  const memberWs = await WsClient.connect(svc.nodeUrl, member.jwt);
  t.teardown(() => Promise.all([ownerWs.close(), memberWs.close()]));

  const muted = await it.node.post(`/api/chats/${chatId}/mutes`, { userId: member.userId }, admin.jwt);
  t.equal(muted.status, 201, 'an admin mutes a plain member');
  t.match(muted.body, { chatId, userId: member.userId, mutedBy: `user:${admin.userId}`, mutedAt: String });
  t.notOk('expiresAt' in muted.body, 'until lifted');
  for (const ws of [ownerWs, memberWs]) t.match(await ws.waitFor((f) => f.type === 'member.muted'), { chatId, userId: member.userId }, 'announced to the chat, the muted member too');

  const send = await it.node.post(`/api/messages/${chatId}`, { content: 'let me speak' }, member.jwt);
  t.equal(send.status, 403, 'REST send refused');
  t.equal(send.body.code, 'USER_MUTED');
  t.match(send.body.detail, /muted in this chat/);
  const wsSend = await memberWs.request({ type: 'message.send', chatId, content: 'over the socket' });
  t.match(wsSend, { type: 'error', code: 'USER_MUTED' }, 'WebSocket send refused with the same code');
  t.match(await memberWs.request({ type: 'typing.start', chatId }), { type: 'error', code: 'USER_MUTED' }, 'typing refused');
  t.equal((await it.node.post(`/api/messages/${chatId}/${before.messageId}/reactions`, { reaction: '👍' }, member.jwt)).body.code, 'USER_MUTED', 'reactions refused');
  t.equal((await it.node.call('PUT', `/api/messages/${chatId}/${before.messageId}`, { body: { content: 'edited' }, token: member.jwt })).body.code, 'USER_MUTED', 'edits refused');

  await it.node.post(`/api/messages/${chatId}`, { content: 'owner speaks' }, owner.jwt);
  t.match(await memberWs.waitFor((f) => f.type === 'message.new' && f.message.content === 'owner speaks'), { chatId }, 'still receives');
  const history = await it.node.get(`/api/messages/getMessages/${chatId}`, member.jwt);
  t.equal(history.status, 200, 'still reads');
  t.equal(history.body.messages[0].content, 'owner speaks');
  t.equal((await it.node.del(`/api/messages/${chatId}/${before.messageId}`, member.jwt)).status, 200, 'may still delete its own message');

  const listed = await it.node.get(`/api/chats/${chatId}/mutes`, owner.jwt);
  t.same(listed.body.mutes.map((m: { userId: string }) => m.userId), [member.userId], 'the owner sees the mute');
  t.equal((await it.node.get(`/api/chats/${chatId}/mutes`, it.apiKey)).body.mutes.length, 1, 'and the backend');
  t.equal((await it.node.get(`/api/chats/${chatId}/mutes`, member.jwt)).body.code, 'NOT_ALLOWED', 'a plain member does not');

  t.equal((await it.node.del(`/api/chats/${chatId}/mutes/${member.userId}`, owner.jwt)).status, 204);
  t.match(await memberWs.waitFor((f) => f.type === 'member.unmuted'), { chatId, userId: member.userId });
  t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'back' }, member.jwt)).status, 201, 'sends again');
  t.equal((await memberWs.request({ type: 'typing.start', chatId })).type, 'ack', 'types again');
  const again = await it.node.del(`/api/chats/${chatId}/mutes/${member.userId}`, owner.jwt);
  t.equal(again.status, 404);
  t.equal(again.body.code, 'MUTE_NOT_FOUND');

  const log = (await it.node.get('/api/moderation/actions', it.apiKey)).body.actions as { action: string; chatId?: string; userId?: string; by: string }[];
  t.match(log.slice(0, 2), [
    { action: 'member.unmuted', chatId, userId: member.userId, by: `user:${owner.userId}` },
    { action: 'member.muted', chatId, userId: member.userId, by: `user:${admin.userId}` },
  ], 'both recorded, newest first');
});

t.test('a 2-second mute lifts by itself', async (t) => {
  const { it, member, chatId } = await group('timed-mute');
  const expiresAt = new Date(Date.now() + 2000).toISOString();
  const muted = await it.node.post(`/api/chats/${chatId}/mutes`, { userId: member.userId, expiresAt }, it.apiKey);
  t.equal(muted.status, 201, 'the backend mutes with its API key');
  t.match(muted.body, { expiresAt, mutedBy: `apiKey:${it.keyId}` });
  const refused = await it.node.post(`/api/messages/${chatId}`, { content: 'now?' }, member.jwt);
  t.equal(refused.body.code, 'USER_MUTED');
  t.match(refused.body.detail, expiresAt, 'the refusal says until when');
  await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 100));
  t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'now!' }, member.jwt)).status, 201, 'sends just after the expiry');
  t.same((await it.node.get(`/api/chats/${chatId}/mutes`, it.apiKey)).body.mutes, [], 'no longer listed');
});

t.test('who may mute and ban whom', async (t) => {
  const { it, owner, admin, member, other, chatId } = await group('roles');
  const outsider = await it.user('outsider');
  const mute = (by: string, userId: string) => it.node.post(`/api/chats/${chatId}/mutes`, { userId }, by);
  t.equal((await mute(member.jwt, other.userId)).body.code, 'NOT_ALLOWED', 'a plain member cannot');
  t.equal((await mute(admin.jwt, owner.userId)).body.code, 'NOT_ALLOWED', 'an admin cannot mute the owner');
  t.equal((await mute(owner.jwt, owner.userId)).body.code, 'NOT_ALLOWED', 'nobody mutes itself');
  t.equal((await mute(outsider.jwt, member.userId)).status, 404, 'a non-member does not see the chat');
  t.equal((await mute(owner.jwt, admin.userId)).status, 201, 'the owner mutes an admin');
  t.equal((await mute(owner.jwt, outsider.userId)).body.code, 'USER_NOT_FOUND', 'only members are muted');
  t.equal((await it.node.post(`/api/chats/${chatId}/bans`, { userId: admin.userId }, admin.jwt)).body.code, 'NOT_ALLOWED', 'an admin cannot ban itself');

  const direct = (await it.node.post('/api/chats', { type: 'direct', userId: other.userId }, member.jwt)).body.chatId as string;
  t.equal((await it.node.post(`/api/chats/${direct}/bans`, { userId: other.userId }, it.apiKey)).body.code, 'NOT_ALLOWED', 'a direct chat has no bans');
  t.equal((await it.node.post(`/api/chats/${direct}/mutes`, { userId: other.userId }, member.jwt)).body.code, 'NOT_ALLOWED', 'nor mutes by its members');
  t.equal((await it.node.post(`/api/chats/${direct}/mutes`, { userId: other.userId }, it.apiKey)).status, 201, 'the backend mutes in a direct chat');
  t.equal((await it.node.post(`/api/messages/${direct}`, { content: 'hi' }, other.jwt)).body.code, 'USER_MUTED');

  const past = await it.node.post(`/api/chats/${chatId}/mutes`, { userId: member.userId, expiresAt: new Date(Date.now() - 1000).toISOString() }, owner.jwt);
  t.equal(past.status, 400);
  t.same(past.body.errors, [{ path: '/body/expiresAt', message: 'must be a time in the future' }]);
  const extra = await it.node.post(`/api/chats/${chatId}/bans`, { userId: member.userId, forever: true }, owner.jwt);
  t.equal(extra.status, 400, 'an unknown field');
  t.equal((await it.node.post(`/api/chats/not-a-uuid/mutes`, { userId: member.userId }, owner.jwt)).status, 400, 'a bad chat id');
  t.equal((await it.node.post(`/api/chats/${chatId}/mutes`, { userId: member.userId })).status, 401, 'no credentials');
  t.equal((await it.node.post(`/api/chats/${chatId}/mutes`, { userId: member.userId }, 'x.eyJraW5kIjoiYXBpX2tleSJ9.y')).status, 401, 'a forged token claiming to be a key');
});

t.test('a chat ban removes the member and keeps it out until lifted; a timed one lifts by itself', async (t) => {
  const { it, owner, admin, member, other, chatId } = await group('banned');
  const memberWs = await WsClient.connect(svc.nodeUrl, member.jwt);
  const otherWs = await WsClient.connect(svc.nodeUrl, other.jwt);
  t.teardown(() => Promise.all([memberWs.close(), otherWs.close()]));

  const banned = await it.node.post(`/api/chats/${chatId}/bans`, { userId: member.userId, reason: 'trolling' }, admin.jwt);
  t.equal(banned.status, 201);
  t.match(banned.body, { chatId, userId: member.userId, reason: 'trolling', bannedBy: `user:${admin.userId}` });
  t.match(await memberWs.waitFor((f) => f.type === 'member.banned'), { chatId, userId: member.userId }, 'the banned member hears it');
  t.match(await memberWs.waitFor((f) => f.type === 'membership.changed'), { chatId, userId: member.userId, change: 'removed' }, 'then its removal');
  t.match(await otherWs.waitFor((f) => f.type === 'member.banned'), { userId: member.userId }, 'the others hear it');
  t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'still here?' }, member.jwt)).status, 404, 'no longer a member');

  const readd = await it.node.post(`/api/chats/${chatId}/members`, { userIds: [member.userId] }, owner.jwt);
  t.equal(readd.status, 403, 'nobody adds it back');
  t.equal(readd.body.code, 'MEMBER_BANNED');
  t.match((await it.node.get(`/api/chats/${chatId}/bans`, owner.jwt)).body.bans, [{ userId: member.userId, reason: 'trolling' }], 'listed for the owner');
  t.equal((await it.node.get(`/api/chats/${chatId}/bans`, other.jwt)).body.code, 'NOT_ALLOWED', 'not for a plain member');

  t.equal((await it.node.del(`/api/chats/${chatId}/bans/${member.userId}`, it.apiKey)).status, 204, 'the backend lifts it');
  t.match(await otherWs.waitFor((f) => f.type === 'member.unbanned'), { userId: member.userId });
  t.equal((await it.node.post(`/api/chats/${chatId}/members`, { userIds: [member.userId] }, owner.jwt)).status, 200, 'added again');
  t.equal((await it.node.del(`/api/chats/${chatId}/bans/${member.userId}`, it.apiKey)).body.code, 'BAN_NOT_FOUND');

  const expiresAt = new Date(Date.now() + 1500).toISOString();
  t.equal((await it.node.post(`/api/chats/${chatId}/bans`, { userId: other.userId, expiresAt }, it.apiKey)).status, 201, 'a timed ban');
  t.equal((await it.node.post(`/api/chats/${chatId}/members`, { userIds: [other.userId] }, owner.jwt)).body.code, 'MEMBER_BANNED');
  await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 100));
  t.equal((await it.node.post(`/api/chats/${chatId}/members`, { userIds: [other.userId] }, owner.jwt)).status, 200, 'added again after its expiry');
});

t.test('the SDK: ChatClient for owners and admins, ChatServer for the backend', async (t) => {
  const { it, owner, member, other, chatId } = await group('sdk');
  const base = svc.nodeUrl;
  const ownerClient = new ChatClient({ baseUrl: base, WebSocket: WebSocket as never });
  ownerClient.setAuth({ jwt: owner.jwt, refreshToken: owner.refreshToken, userId: owner.userId });
  const server = new ChatServer({ baseUrl: base, apiKey: it.apiKey });
  t.match(await ownerClient.muteMember(chatId, { userId: member.userId }), { userId: member.userId, mutedBy: `user:${owner.userId}` });
  t.same((await ownerClient.listMutes(chatId)).map((m) => m.userId), [member.userId]);
  await ownerClient.unmuteMember(chatId, member.userId);
  t.same(await server.listMutes(chatId), []);
  t.match(await server.banMember(chatId, { userId: other.userId }), { userId: other.userId, bannedBy: `apiKey:${it.keyId}` });
  t.match((await ownerClient.listChatBans(chatId)).bans, [{ userId: other.userId }]);
  await server.unbanMember(chatId, other.userId);
  const error = await ownerClient.unbanMember(chatId, other.userId).catch((e: unknown) => e);
  t.ok(error instanceof ChatApiError, 'a refusal is a ChatApiError');
  t.equal((error as ChatApiError).code, 'BAN_NOT_FOUND');
  await server.muteMember(chatId, { userId: member.userId });
  t.same((await server.listMutes(chatId)).map((m) => m.userId), [member.userId]);
  await server.unmuteMember(chatId, member.userId);
  t.same((await server.listChatBans(chatId)).bans, []);
});
