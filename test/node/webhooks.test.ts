import t, { type Test } from 'tap';
import { WEBHOOK_EVENTS } from '../../common/webhooks/index.ts';
import { integration, startService, WsClient, type Running } from '../helpers/index.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

// README, "Webhooks": every event type reaches a real receiver, signed (verified with the
// standardwebhooks library by WebhookReceiver), with the body the README gives.
const env = { WEBHOOK_ALLOW_INSECURE_URLS: 'true', WEBHOOK_UNREAD_WINDOW_SECONDS: '1' };

async function setup(t: Test, svc: Running, events: readonly string[] = WEBHOOK_EVENTS) {
  const it = await integration(svc, 'hooks');
  const receiver = await WebhookReceiver.start();
  t.teardown(() => receiver.stop());
  const created = await it.control.post(`/api/client/apps/${it.appId}/webhooks`, { url: receiver.url, events }, it.accessToken);
  if (created.status !== 201) throw new Error(created.text);
  receiver.secret = created.body.secret;
  return { it, receiver, webhookId: created.body.id as string };
}

t.test('every event type arrives once, signed, with the resource the API returns', async (t) => {
  const svc = await startService(env);
  t.teardown(() => svc.stop());
  const { it, receiver } = await setup(t, svc);
  const alice = await it.user('alice');
  const bob = await it.user('bob');
  const carol = await it.user('carol');
  const ws = await WsClient.connect(svc.nodeUrl, alice.jwt);
  const group = await it.node.post('/api/chats', { type: 'group', name: 'Hooks', memberIds: [bob.userId] }, alice.jwt);
  const chatId = group.body.chatId as string;
  await it.node.post(`/api/chats/${chatId}/members`, { userIds: [carol.userId] }, alice.jwt);
  const sent = await it.node.post(`/api/messages/${chatId}`, { content: 'hello' }, alice.jwt);
  const messageId = sent.body.message.messageId as string;
  // Bob and Carol have no connection: their message.unread comes once the window closes.
  await receiver.until(() => receiver.ofType('message.unread').length === 2, 10_000, 'message.unread');
  await it.node.put(`/api/messages/${chatId}/${messageId}`, { content: 'hello, edited' }, alice.jwt);
  await it.node.post(`/api/messages/${chatId}/${messageId}/reactions`, { reaction: '👍' }, bob.jwt);
  await it.node.del(`/api/messages/${chatId}/${messageId}/reactions/${encodeURIComponent('👍')}`, bob.jwt);
  const flagId = (await it.node.post(`/api/messages/${chatId}/${messageId}/flags`, { reason: 'rude' }, bob.jwt)).body.flagId as string;
  await it.node.post(`/api/moderation/flags/${flagId}/resolve`, { action: 'dismiss' }, it.apiKey);
  await it.node.del(`/api/messages/${chatId}/${messageId}`, alice.jwt);
  await it.node.put(`/api/chats/${chatId}`, { name: 'Renamed' }, alice.jwt);
  await it.node.post(`/api/chats/${chatId}/mutes`, { userId: bob.userId }, alice.jwt);
  await it.node.del(`/api/chats/${chatId}/mutes/${bob.userId}`, alice.jwt);
  await it.node.del(`/api/chats/${chatId}/members/${carol.userId}`, alice.jwt);
  await it.node.post(`/api/chats/${chatId}/bans`, { userId: carol.userId, reason: 'ahead' }, it.apiKey);
  await it.node.del(`/api/chats/${chatId}/bans/${carol.userId}`, it.apiKey);
  await it.node.put('/api/moderation/blocklist', { entries: [{ text: 'darn', action: 'mask' }] }, it.apiKey);
  await ws.close();
  await it.node.del(`/api/chats/${chatId}`, alice.jwt);
  await it.node.post('/api/moderation/bans', { userId: bob.userId, reason: 'spam' }, it.apiKey);
  await it.node.del(`/api/moderation/bans/${bob.userId}`, it.apiKey);
  await it.node.del(`/api/users/${carol.userId}`, it.apiKey);

  await receiver.until(() => WEBHOOK_EVENTS.every((type) => receiver.ofType(type).length > 0), 15_000);
  t.equal(receiver.forged, 0, 'every request verified with the standardwebhooks library');
  for (const d of receiver.events.values()) {
    t.equal(d.appId, it.appId, `${d.type}: appId`);
    t.match(d.id, /^evt_[0-9a-f]{26}$/, `${d.type}: id`);
    t.ok(Number.isFinite(Date.parse(d.timestamp)), `${d.type}: timestamp`);
  }
  const one = (type: string) => receiver.ofType(type)[0]!.data;
  t.match(one('user.created'), { userId: alice.userId, username: alice.username }, 'user.created: the user');
  t.match(one('user.online'), { userId: alice.userId });
  t.match(one('user.offline'), { userId: alice.userId });
  t.match(one('chat.created'), { chatId, type: 'group', name: 'Hooks', createdBy: alice.userId, members: [{ userId: alice.userId, role: 'owner' }, { userId: bob.userId, role: 'member' }] });
  t.match(one('member.added'), { chatId, userId: carol.userId, role: 'member', readSeq: 0 });
  t.match(one('message.new'), { chatId, messageId, senderId: alice.userId, content: 'hello', seq: 1, rev: 1 });
  t.match(one('message.updated'), { chatId, messageId, content: 'hello, edited', edited: true, seq: 1, rev: 2 });
  t.match(one('reaction.added'), { chatId, messageId, senderId: bob.userId, reaction: '👍', seq: 1, rev: 3 });
  t.match(one('reaction.removed'), { chatId, messageId, senderId: bob.userId, reaction: '👍', seq: 1, rev: 4 });
  t.match(one('message.deleted'), { chatId, messageId, deleted: true, content: '', seq: 1, rev: 5 });
  t.match(one('chat.updated'), { chatId, name: 'Renamed' });
  t.match(one('member.removed'), { chatId, userId: carol.userId, removedBy: alice.userId });
  t.match(one('chat.deleted'), { chatId, deletedBy: alice.userId });
  t.match(one('user.deleted'), { userId: carol.userId });
  t.match(one('user.banned'), { userId: bob.userId, reason: 'spam', bannedBy: String });
  t.match(one('user.unbanned'), { userId: bob.userId, unbannedBy: String });
  t.match(one('message.flagged'), { flagId, chatId, messageId, senderId: alice.userId, flaggedBy: bob.userId, reason: 'rude', messageHidden: false });
  t.match(one('flag.resolved'), { action: 'dismiss', chatId, messageId, senderId: alice.userId, flagIds: [flagId], by: `apiKey:${it.keyId}` });
  t.match(one('member.muted'), { chatId, userId: bob.userId, by: `user:${alice.userId}` });
  t.match(one('member.unmuted'), { chatId, userId: bob.userId, by: `user:${alice.userId}` });
  t.match(one('member.banned'), { chatId, userId: carol.userId, reason: 'ahead', by: `apiKey:${it.keyId}` });
  t.match(one('member.unbanned'), { chatId, userId: carol.userId });
  t.match(one('blocklist.updated'), { entries: 1, updatedAt: String, by: `apiKey:${it.keyId}` });
  t.match(receiver.ofType('message.unread').map((d) => d.data).sort((a, b) => (a.userId === bob.userId ? -1 : b.userId === bob.userId ? 1 : 0)), [
    { chatId, userId: bob.userId, unreadCount: 1, messages: 1, lastMessage: { messageId } },
    { chatId, userId: carol.userId, unreadCount: 1, messages: 1, lastMessage: { messageId } },
  ]);
  t.equal(receiver.ofType('message.new').length, 1, 'one message, one message.new');
  t.equal(receiver.ofType('user.created').length, 3);
});

t.test('message.unread: for a member with no connection, coalesced per window; not for a connected one', async (t) => {
  const svc = await startService(env);
  t.teardown(() => svc.stop());
  const { it, receiver } = await setup(t, svc, ['message.unread', 'message.new']);
  const alice = await it.user('alice');
  const online = await it.user('online');
  const offline = await it.user('offline');
  const ws = await WsClient.connect(svc.nodeUrl, online.jwt);
  t.teardown(() => ws.close());
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'Unread', memberIds: [online.userId, offline.userId] }, alice.jwt)).body.chatId as string;
  for (const content of ['one', 'two', 'three']) await it.node.post(`/api/messages/${chatId}`, { content }, alice.jwt);
  await receiver.until(() => receiver.ofType('message.unread').length >= 1, 10_000);
  // Past the window, with the three messages' events in: nothing else comes for this window.
  await receiver.until(() => receiver.ofType('message.new').length === 3, 10_000);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const unread = receiver.ofType('message.unread');
  t.equal(unread.length, 1, 'one event for three messages in one window');
  t.match(unread[0]!.data, { chatId, userId: offline.userId, unreadCount: 3, messages: 3, lastMessage: { content: 'three', seq: 3 } });
  t.notOk(unread.some((d) => d.data.userId === online.userId), 'none for the member with a live connection');
  t.notOk(unread.some((d) => d.data.userId === alice.userId), 'none for the sender');
  // The member reads two of them; the next window's count is what is unread then.
  await it.node.post(`/api/chats/${chatId}/read`, { seq: 2 }, offline.jwt);
  await it.node.post(`/api/messages/${chatId}`, { content: 'four' }, alice.jwt);
  await receiver.until(() => receiver.ofType('message.unread').length === 2, 10_000);
  t.match(receiver.ofType('message.unread')[1]!.data, { userId: offline.userId, unreadCount: 2, messages: 1, mentioned: false });
  t.equal(unread[0]!.data.mentioned, false, 'none of the first window mentioned the member');
  // A window with a message that mentions the member says so.
  await it.node.post(`/api/messages/${chatId}`, { content: 'five', mentions: [offline.userId] }, alice.jwt);
  await receiver.until(() => receiver.ofType('message.unread').length === 3, 10_000);
  t.match(receiver.ofType('message.unread')[2]!.data, { userId: offline.userId, messages: 1, mentioned: true, lastMessage: { content: 'five', mentions: [offline.userId] } }, 'mentioned: true');
});

t.test('a receiver answering 500 is retried on the schedule (1 s, 2 s, 4 s …), with the same webhook-id', async (t) => {
  const svc = await startService(env);
  t.teardown(() => svc.stop());
  const { it, receiver, webhookId } = await setup(t, svc, ['user.created']);
  let failures = 0;
  receiver.answer = () => (++failures <= 3 ? 500 : 200);
  await it.user('retried');
  await receiver.until(() => receiver.events.size === 1, 20_000);
  const tries = receiver.attempts;
  t.equal(tries.length, 4, 'three failures, then the delivery');
  t.equal(new Set(tries.map((a) => a.id)).size, 1, 'one webhook-id for every attempt');
  const gaps = tries.slice(1).map((a, i) => a.at - tries[i]!.at);
  for (const [i, base] of [1000, 2000, 4000].entries()) {
    t.ok(gaps[i]! >= base * 0.8 - 50 && gaps[i]! <= base * 1.2 + 500, `retry ${i + 1} after ${gaps[i]} ms (schedule ${base} ms ± 20 %)`);
  }
  // The delivery log shows each attempt: the failures with their next retry, then the success.
  let log: any[] = [];
  for (let i = 0; i < 40 && log.length < 4; i++) {
    log = (await it.control.get(`/api/client/apps/${it.appId}/webhooks/${webhookId}/deliveries`, it.accessToken)).body.deliveries;
    if (log.length < 4) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const eventId = tries[0]!.id;
  t.match(log, [
    { eventId, type: 'user.created', attempt: 4, status: 'succeeded', statusCode: 200 },
    { eventId, attempt: 3, status: 'failed', statusCode: 500, error: 'HTTP 500', nextRetryAt: String },
    { eventId, attempt: 2, status: 'failed', statusCode: 500, nextRetryAt: String },
    { eventId, attempt: 1, status: 'failed', statusCode: 500, nextRetryAt: String },
  ], 'newest first, with the next retry of each failure');
  t.ok(Date.parse(log[3].nextRetryAt) - Date.parse(log[3].at) >= 700, 'the first retry was due about a second after the first attempt');
});

t.test('410 Gone disables the endpoint; nothing more is sent to it', async (t) => {
  const svc = await startService(env);
  t.teardown(() => svc.stop());
  const { it, receiver, webhookId } = await setup(t, svc, ['user.created']);
  receiver.answer = () => 410;
  await it.user('first');
  await receiver.until(() => receiver.attempts.length === 1, 10_000);
  let endpoint: any;
  for (let i = 0; i < 50; i++) {
    endpoint = (await it.control.get(`/api/client/apps/${it.appId}/webhooks/${webhookId}`, it.accessToken)).body;
    if (endpoint.status === 'DISABLED') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.match(endpoint, { status: 'DISABLED', disabledReason: /410/ }, 'shown as disabled, and why');
  await it.user('second');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(receiver.attempts.length, 1, 'no attempt after the 410 (and no retry of it)');
});

t.test('a deleted endpoint gets nothing more: what the delivery thread holds for it is dropped', async (t) => {
  const svc = await startService(env);
  t.teardown(() => svc.stop());
  const { it, receiver, webhookId } = await setup(t, svc, ['user.created']);
  // Another endpoint of the application, which stays.
  const other = await WebhookReceiver.start();
  t.teardown(() => other.stop());
  const created = await it.control.post(`/api/client/apps/${it.appId}/webhooks`, { url: other.url, events: ['user.created'] }, it.accessToken);
  other.secret = created.body.secret;
  const held: (() => void)[] = [];
  receiver.answer = () => new Promise<number>((resolve) => held.push(() => resolve(200)));
  for (let i = 0; i < 30; i++) await it.user(`held-${i}`);
  // At most 8 requests at a time per endpoint: the other 22 wait in the delivery thread.
  await receiver.until(() => receiver.attempts.length === 8, 10_000, 'the first 8 requests');
  t.equal((await it.control.del(`/api/client/apps/${it.appId}/webhooks/${webhookId}`, it.accessToken)).status, 204);
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (const release of held.splice(0)) release();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.equal(receiver.attempts.length, 8, 'only the 8 sent before the delete arrived; the 22 waiting were dropped');
  t.equal(held.length, 0, 'nothing was sent after the delete');
  await it.user('after');
  await other.until(() => other.events.size === 31, 10_000);
  t.equal(other.events.size, 31, 'the endpoint that stays gets every event, before the delete and after');
});

t.test('a thread reply is a message.new with its parentId, once; its edit a message.updated; its summary no event of the parent', async (t) => {
  const svc = await startService(env);
  t.teardown(() => svc.stop());
  const { it, receiver } = await setup(t, svc, ['message.new', 'message.updated']);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'Threads', memberIds: [bob.userId] }, alice.jwt)).body.chatId as string;
  const parent = (await it.node.post(`/api/messages/${chatId}`, { content: 'parent' }, alice.jwt)).body.message;
  const reply = (await it.node.post(`/api/messages/${chatId}`, { content: 'reply', parentId: parent.messageId }, bob.jwt)).body.message;
  await it.node.put(`/api/messages/${chatId}/${reply.messageId}`, { content: 'reply, edited' }, bob.jwt);
  await receiver.until(() => receiver.ofType('message.updated').length === 1 && receiver.ofType('message.new').length === 2, 10_000);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const news = receiver.ofType('message.new');
  t.equal(news.length, 2, 'the parent and the reply, once each');
  t.match(news.find((d) => d.data.messageId === reply.messageId)!.data, { chatId, parentId: parent.messageId, content: 'reply', seq: 1 }, 'the reply names its chat and parent; seq is its place in the thread');
  t.match(receiver.ofType('message.updated').map((d) => d.data), [{ messageId: reply.messageId, parentId: parent.messageId, content: 'reply, edited' }], "the reply's edit, once, and nothing for its parent's new summary");
});
