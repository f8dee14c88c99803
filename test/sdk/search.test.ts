import t from 'tap';
import { sdkApp } from '../helpers/sdk-app.ts';

/** Message search through the SDK (README, "Search"): a user's over its chats, the backend's over the application. */
const { server, client } = await sdkApp(t, 'search');

t.test('search through the SDK: a user finds its chats’ messages with the places of the words, the backend every chat’s', async (t) => {
  const [ann, ben, cat] = [await server.registerUser({ username: `ann-${process.pid}` }), await server.registerUser({ username: `ben-${process.pid}` }), await server.registerUser({ username: `cat-${process.pid}` })];
  const [A, B] = [await client(t, ann.userId), await client(t, ben.userId)];
  const shared = await A.createGroup('Plans', [ben.userId]);
  const apart = await A.createGroup('Apart', [cat.userId]);
  const first = await A.send(shared.chatId, 'Lunch at the Café Rouge?');
  await A.send(apart.chatId, 'lunch with cat');
  await B.send(shared.chatId, 'café sounds good', { parentId: first.messageId });

  const page = await B.search('cafe');
  t.same(page.hits.map((h) => h.message.content), ['café sounds good', 'Lunch at the Café Rouge?'], 'newest first, folded, replies too');
  t.same(page.hits[1]!.matches, [[13, 17]], 'with where the word is');
  t.same((await B.search('lunch')).hits.map((h) => h.chatId), [shared.chatId], 'only the chats ben is in');
  t.same((await B.search('caf', { inThread: false })).hits.map((h) => h.message.content), ['Lunch at the Café Rouge?'], 'a prefix, and a filter');
  const all = await server.searchMessages('lunch');
  t.same(all.hits.map((h) => h.message.content), ['lunch with cat', 'Lunch at the Café Rouge?'], 'the backend: every chat of the application');
  const paged = await A.search('lunch', { size: 1 });
  t.equal(paged.hits.length, 1);
  t.same((await A.search('lunch', { size: 1, cursor: paged.nextCursor! })).hits.map((h) => h.message.content), ['Lunch at the Café Rouge?'], 'the next page from nextCursor');
  await A.send(shared.chatId, 'café café café');
  await A.send(shared.chatId, 'we met at that café near the station yesterday evening with some friends');
  t.same((await B.search('cafe', { order: 'relevance' })).hits.map((h) => h.message.content).slice(0, 2), ['café café café', 'café sounds good'], 'by relevance (not newest first)');
});
