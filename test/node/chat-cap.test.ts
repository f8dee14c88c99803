import t from 'tap';
import { integration, startService } from '../helpers/index.ts';

// USER_CHATS_MAX bounds how many chats one user is in (README, Limits): creating a chat with, or
// adding, a user already in that many is refused, naming the user; leaving one makes room again.
const svc = await startService({ USER_CHATS_MAX: '3', USER_WRITES_PER_SECOND: '1000' });
t.teardown(() => svc.stop());
const it = await integration(svc, 'cap');

t.test('a user in USER_CHATS_MAX chats cannot create, be added to, or be given another chat', async (t) => {
  const [full, friend, other] = [await it.user('full'), await it.user('friend'), await it.user('other')];
  const groups: string[] = [];
  for (let i = 0; i < 3; i++) {
    const created = await it.node.post('/api/chats', { type: 'group', name: `g${i}`, memberIds: [] }, full.jwt);
    t.equal(created.status, 201, `chat ${i + 1} of 3`);
    groups.push(created.body.chatId);
  }
  const fourth = await it.node.post('/api/chats', { type: 'group', name: 'one too many', memberIds: [] }, full.jwt);
  t.equal(fourth.status, 403);
  t.equal(fourth.body.code, 'CHAT_LIMIT_REACHED');
  t.match(fourth.body.detail, full.userId, 'the refusal names the user');
  t.match(fourth.body.detail, /3 chats/, 'and the limit');

  const direct = await it.node.post('/api/chats', { type: 'direct', userId: full.userId }, friend.jwt);
  t.equal(direct.body.code, 'CHAT_LIMIT_REACHED', 'a direct chat with a user at the cap is refused');
  const withFull = await it.node.post('/api/chats', { type: 'group', name: 'with full', memberIds: [other.userId, full.userId] }, friend.jwt);
  t.equal(withFull.body.code, 'CHAT_LIMIT_REACHED', 'so is a group naming one among its members');
  t.match(withFull.body.detail, full.userId);
  const group = await it.node.post('/api/chats', { type: 'group', name: 'friends', memberIds: [other.userId] }, friend.jwt);
  t.equal(group.status, 201, 'and nothing of it was made: the others are not held back');
  const added = await it.node.post(`/api/chats/${group.body.chatId}/members`, { userIds: [full.userId] }, friend.jwt);
  t.equal(added.status, 403, 'adding a user at the cap is refused');
  t.equal(added.body.code, 'CHAT_LIMIT_REACHED');
  t.same((await it.node.get(`/api/chats/${group.body.chatId}/members`, friend.jwt)).body.members.map((m: { userId: string }) => m.userId).sort(), [friend.userId, other.userId].sort(), 'and not added');
  t.equal((await it.node.get('/api/chats?size=100', full.jwt)).body.chats.length, 3, 'the user is in exactly the cap');

  t.equal((await it.node.del(`/api/chats/${groups[0]}`, full.jwt)).status, 204, 'deleting one of its chats');
  t.equal((await it.node.post(`/api/chats/${group.body.chatId}/members`, { userIds: [full.userId] }, friend.jwt)).status, 200, 'makes room for one more');
  t.equal((await it.node.post('/api/chats', { type: 'group', name: 'again too many', memberIds: [] }, full.jwt)).body.code, 'CHAT_LIMIT_REACHED', 'and only one');
  t.equal((await it.node.del(`/api/chats/${group.body.chatId}/members/${full.userId}`, full.jwt)).status, 204, 'leaving a group');
  t.equal((await it.node.post('/api/chats', { type: 'direct', userId: full.userId }, friend.jwt)).status, 201, 'makes room too');
});
