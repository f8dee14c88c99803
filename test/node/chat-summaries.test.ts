import t from 'tap';
import { client, integration, removeDir, startService } from '../helpers/index.ts';

// A chat says who is in it (README, "Routes"): every chat object carries its member count, and a
// direct chat its peer (id, username, display name, as the user is now).
const svc = await startService();
t.teardown(() => svc.stop());

t.test('direct chats name the peer; every chat counts its members, as they change', async (t) => {
  const it = await integration(svc, 'summaries');
  const [ann, ben, cat] = [await it.user('ann'), await it.user('ben'), await it.user('cat')];
  await it.node.put(`/api/users/${ben.userId}`, { displayName: 'Ben B.' }, it.apiKey);
  const created = await it.node.post('/api/chats', { type: 'direct', userId: ben.userId }, ann.jwt);
  t.match(created.body, { type: 'direct', memberCount: 2, peer: { userId: ben.userId, username: ben.username, displayName: 'Ben B.' } }, 'the created direct chat names ben to ann');
  const chatId = created.body.chatId as string;
  t.match((await it.node.get(`/api/chats/${chatId}`, ben.jwt)).body.peer, { userId: ann.userId, username: ann.username }, 'and ann to ben');
  await it.node.put(`/api/users/${ben.userId}`, { displayName: 'Benjamin' }, it.apiKey);
  const listed = (await it.node.get('/api/chats', ann.jwt)).body.chats as { chatId: string; peer?: { displayName: string } }[];
  t.equal(listed.find((c) => c.chatId === chatId)?.peer?.displayName, 'Benjamin', 'the list shows the peer as it is now');

  const group = await it.node.post('/api/chats', { type: 'group', name: 'three', memberIds: [ben.userId] }, ann.jwt);
  t.match(group.body, { type: 'group', memberCount: 2 });
  t.notOk('peer' in group.body, 'a group has no peer');
  const groupId = group.body.chatId as string;
  await it.node.post(`/api/chats/${groupId}/members`, { userIds: [cat.userId] }, ann.jwt);
  t.equal((await it.node.get(`/api/chats/${groupId}`, cat.jwt)).body.memberCount, 3, 'counted after an addition');
  await it.node.del(`/api/chats/${groupId}/members/${ben.userId}`, ann.jwt);
  const after = (await it.node.get('/api/chats', ann.jwt)).body.chats as { chatId: string; memberCount: number }[];
  t.equal(after.find((c) => c.chatId === groupId)?.memberCount, 2, 'and after a removal, in the list too');
});

// One's own message is never unread (README, "Read receipts"): a send moves its sender's read mark.
t.test("a sender's own messages are read: its chat shows them as read, now and after a restart", async (t) => {
  const own = await startService();
  let dataDir = own.dataDir;
  t.teardown(() => removeDir(dataDir));
  let running = own;
  t.teardown(() => running.stop());
  const it = await integration(own, 'own-sends');
  const [ann, ben] = [await it.user('ann'), await it.user('ben')];
  const chatId = (await it.node.post('/api/chats', { type: 'direct', userId: ben.userId }, ann.jwt)).body.chatId as string;
  for (const content of ['one', 'two', 'three']) t.equal((await it.node.post(`/api/messages/${chatId}`, { content }, ann.jwt)).status, 201);
  t.match((await it.node.get(`/api/chats/${chatId}`, ann.jwt)).body, { lastSeq: 3, readSeq: 3, unreadCount: 0 }, 'the sender has read its own messages');
  t.match((await it.node.get(`/api/chats/${chatId}`, ben.jwt)).body, { readSeq: 0, unreadCount: 3 }, 'the other member has not');
  t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'reply' }, ben.jwt)).status, 201);
  t.match((await it.node.get(`/api/chats/${chatId}`, ann.jwt)).body, { readSeq: 3, unreadCount: 1 }, "the peer's reply is unread for the first sender");
  t.match((await it.node.get(`/api/chats/${chatId}`, ben.jwt)).body, { readSeq: 4, unreadCount: 0 }, 'and its own reply read for the second');
  t.equal((await it.node.post(`/api/chats/${chatId}/read`, { seq: 2 }, ben.jwt)).body.readSeq, 4, 'an older read mark does not move it back');

  // Written to the store: a graceful restart reads the marks back.
  await own.stop();
  dataDir = own.dataDir;
  running = await startService({}, dataDir);
  const node = client(running.nodeUrl);
  const listed = (await node.get('/api/chats', ann.jwt)).body.chats as { chatId: string; readSeq: number; unreadCount: number }[];
  t.match(listed.find((c) => c.chatId === chatId), { readSeq: 3, unreadCount: 1 }, "ann's list after the restart");
  t.match((await node.get(`/api/chats/${chatId}/members`, ann.jwt)).body.members, [{ userId: String }, { userId: String }]);
  const members = (await node.get(`/api/chats/${chatId}/members`, ann.jwt)).body.members as { userId: string; readSeq: number }[];
  t.same(Object.fromEntries(members.map((m) => [m.userId, m.readSeq])), { [ann.userId]: 3, [ben.userId]: 4 }, 'both marks as stored');
});
