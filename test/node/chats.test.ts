import t from 'tap';
import { integration, startService, WsClient } from '../helpers/index.ts';

t.test('direct chats: exactly one per pair, even when both sides create it at once', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const results = await Promise.all([
    ...Array.from({ length: 5 }, () => it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt)),
    ...Array.from({ length: 5 }, () => it.node.post('/api/chats', { type: 'direct', userId: alice.userId }, bob.jwt)),
  ]);
  t.equal(new Set(results.map((r) => r.body.chatId)).size, 1, 'one chat id');
  t.equal(results.filter((r) => r.status === 201).length, 1, 'created once');
  t.equal(results.filter((r) => r.status === 200).length, 9, 'the others get the same chat');
  t.equal((await it.node.post('/api/chats', { type: 'direct', userId: alice.userId }, alice.jwt)).status, 400, 'not with yourself');
  t.equal((await it.node.post('/api/chats', { type: 'direct', userId: '00000000-0000-4000-8000-000000000000' }, alice.jwt)).body.code, 'USER_NOT_FOUND');
});

t.test('my chats: most recent activity first, last message, unread count, cursor paging', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const me = await it.user('me');
  const others = await Promise.all([1, 2, 3, 4, 5].map((i) => it.user(`o${i}`)));
  const chatIds: string[] = [];
  for (const o of others) chatIds.push((await it.node.post('/api/chats', { type: 'direct', userId: o.userId }, me.jwt)).body.chatId);
  // Activity order: chat 2, then 0, then 4 get messages (4 last); 1 and 3 stay empty.
  for (const [i, n] of [[2, 1], [0, 3], [4, 2]] as const) {
    for (let k = 0; k < n; k++) await it.node.post(`/api/messages/${chatIds[i]}`, { content: `to ${i} #${k}` }, others[i]!.jwt);
  }
  const listAll = async () => {
    const seen: any[] = [];
    let cursor: string | undefined;
    do {
      const page = await it.node.get(`/api/chats?size=2${cursor ? `&cursor=${cursor}` : ''}`, me.jwt);
      t.equal(page.status, 200);
      t.ok(page.body.chats.length <= 2);
      seen.push(...page.body.chats);
      cursor = page.body.nextCursor;
    } while (cursor);
    return seen;
  };
  // The README's promise: a chat takes its place within about a second of its newest message.
  const deadline = Date.now() + 2000;
  let seen = await listAll();
  const expected = [chatIds[4], chatIds[0], chatIds[2]].join();
  while (seen.slice(0, 3).map((c) => c.chatId).join() !== expected && Date.now() < deadline) seen = await listAll();
  t.equal(seen.length, 5, 'every chat once');
  t.same(seen.slice(0, 3).map((c) => c.chatId), [chatIds[4], chatIds[0], chatIds[2]], 'most recent activity first');
  t.same(new Set(seen.slice(3).map((c) => c.chatId)), new Set([chatIds[1], chatIds[3]]));
  t.same(seen.slice(0, 3).map((c) => c.unreadCount), [2, 3, 1], 'unread counts');
  t.equal(seen[0].lastMessage.content, 'to 4 #1', 'last message');
  t.notOk(seen[3].lastMessage, 'an empty chat has no last message');

  const read = await it.node.post(`/api/chats/${chatIds[0]}/read`, { seq: 2 }, me.jwt);
  t.same(read.body, { readSeq: 2 });
  t.equal((await it.node.post(`/api/chats/${chatIds[0]}/read`, { seq: 1 }, me.jwt)).body.readSeq, 2, 'never moves back');
  t.equal((await it.node.post(`/api/chats/${chatIds[0]}/read`, { seq: 99 }, me.jwt)).body.readSeq, 3, 'capped at the newest');
  t.equal((await it.node.get(`/api/chats/${chatIds[0]}`, me.jwt)).body.unreadCount, 0);
  t.equal((await it.node.get('/api/chats?cursor=not-a-cursor', me.jwt)).status, 400);
  t.equal((await it.node.get('/api/chats?size=101', me.jwt)).status, 400);
});

t.test('groups: roles, members, rename, leave and delete', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [owner, admin, member, late] = [await it.user('owner'), await it.user('admin'), await it.user('member'), await it.user('late')];
  const created = await it.node.post('/api/chats', { type: 'group', name: 'Team', memberIds: [admin.userId, member.userId] }, owner.jwt);
  t.equal(created.status, 201);
  t.match(created.body, { type: 'group', name: 'Team', role: 'owner', lastSeq: 0, unreadCount: 0 });
  const chatId = created.body.chatId as string;
  const path = `/api/chats/${chatId}`;
  const watcher = await WsClient.connect(svc.nodeUrl, member.jwt);
  t.teardown(() => watcher.close());

  t.equal((await it.node.put(`${path}/members/${admin.userId}`, { role: 'admin' }, owner.jwt)).body.role, 'admin');
  t.equal((await it.node.put(`${path}/members/${member.userId}`, { role: 'admin' }, admin.jwt)).body.code, 'NOT_ALLOWED', 'only the owner sets roles');
  t.equal((await it.node.post(`${path}/members`, { userIds: [late.userId] }, member.jwt)).body.code, 'NOT_ALLOWED', 'members cannot add');
  const added = await it.node.post(`${path}/members`, { userIds: [late.userId] }, admin.jwt);
  t.equal(added.status, 200);
  t.same(added.body.members.map((m: any) => m.userId), [late.userId]);
  const listed = (await it.node.get(`${path}/members`, late.jwt)).body.members.map((m: any) => m.userId);
  t.equal(listed[0], owner.userId, 'joining order, the owner first among the founders');
  t.same(new Set(listed.slice(1, 3)), new Set([admin.userId, member.userId]));
  t.equal(listed[3], late.userId);
  await watcher.waitFor((f) => f.type === 'membership.changed' && f.userId === late.userId && f.change === 'added');

  t.equal((await it.node.put(path, { name: 'Renamed' }, member.jwt)).body.code, 'NOT_ALLOWED');
  t.equal((await it.node.put(path, { name: 'Renamed' }, admin.jwt)).body.name, 'Renamed');
  await watcher.waitFor((f) => f.type === 'chat.updated' && f.chat.name === 'Renamed');

  t.equal((await it.node.del(`${path}/members/${admin.userId}`, member.jwt)).body.code, 'NOT_ALLOWED', 'members cannot remove');
  t.equal((await it.node.del(`${path}/members/${late.userId}`, admin.jwt)).status, 204);
  t.equal((await it.node.get(`/api/messages/getMessages/${chatId}`, late.jwt)).status, 400, 'a removed member loses the history at once');
  t.equal((await it.node.post(`${path}/leave`, undefined, member.jwt)).status, 204);
  t.equal((await it.node.get(path, member.jwt)).status, 404);

  // The owner leaving hands the group to the admin.
  t.equal((await it.node.post(`${path}/leave`, undefined, owner.jwt)).status, 204);
  const after = await it.node.get(`${path}/members`, admin.jwt);
  t.same(after.body.members.map((m: any) => [m.userId, m.role]), [[admin.userId, 'owner']]);

  t.equal((await it.node.del(path, admin.jwt)).status, 204);
  t.equal((await it.node.get(path, admin.jwt)).status, 404);
  t.equal((await it.node.get('/api/chats', admin.jwt)).body.chats.length, 0);
});

t.test('direct chats cannot be left, only deleted, by either member', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chat = await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt);
  const chatId = chat.body.chatId as string;
  t.equal((await it.node.post(`/api/chats/${chatId}/leave`, undefined, bob.jwt)).body.code, 'NOT_ALLOWED');
  t.equal((await it.node.post(`/api/chats/${chatId}/members`, { userIds: [alice.userId] }, bob.jwt)).body.code, 'NOT_ALLOWED');
  t.equal((await it.node.del(`/api/chats/${chatId}`, bob.jwt)).status, 204);
  const again = await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt);
  t.equal(again.status, 201, 'a new direct chat after deletion');
  t.not(again.body.chatId, chatId);
});
