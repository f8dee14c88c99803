import t from 'tap';
import { integration, startService } from '../helpers/index.ts';

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
