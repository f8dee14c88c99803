import t from 'tap';
import { integration, startService } from '../helpers/index.ts';
import { onBothStores } from '../helpers/both-stores.ts';

// Message search (README, "Search"), end to end on both stores: a user finds messages of the chats
// it is in now, by words in any script, folded, the last as a prefix, newest first, with the places
// of the words; edits, deletions, hidden messages, blocks, leaving a chat and tenancy are honoured.
await onBothStores(t, 'a user finds any message of its chats, in any language; what it may not read is never found', async (t, svc) => {
  const it = await integration(svc, 'search');
  const [ann, ben, cat] = [await it.user('ann'), await it.user('ben'), await it.user('cat')];
  const group = async (name: string, owner: typeof ann, ...members: (typeof ann)[]) =>
    (await it.node.post('/api/chats', { type: 'group', name, memberIds: members.map((m) => m.userId) }, owner.jwt)).body.chatId as string;
  const [ab, ac, bc] = [await group('ann+ben', ann, ben), await group('ann+cat', ann, cat), await group('ben+cat', ben, cat)];
  const send = async (chatId: string, who: typeof ann, content: string, extra: object = {}) => {
    const r = await it.node.post(`/api/messages/${chatId}`, { content, ...extra }, who.jwt);
    if (r.status !== 201) throw new Error(`${content}: ${r.status} ${r.text}`);
    return r.body.message as { messageId: string; seq: number; timeStamp: string };
  };
  const search = (who: typeof ann, q: string, params: Record<string, string> = {}) => it.node.get(`/api/search/messages?${new URLSearchParams({ q, ...params })}`, who.jwt);
  const found = async (who: typeof ann, q: string, params: Record<string, string> = {}) => {
    const r = await search(who, q, params);
    if (r.status !== 200) throw new Error(`search ${q}: ${r.status} ${r.text}`);
    return (r.body.hits as { message: { content: string } }[]).map((h) => h.message.content);
  };

  // Times are compared to the millisecond: the filter case below needs messages a few apart.
  const tick = () => new Promise((resolve) => setTimeout(resolve, 3));
  const creme = await send(ab, ann, 'Crème brûlée at the CAFÉ tonight');
  await send(ab, ben, '我们明天开会');
  await tick();
  await send(ac, ann, 'party 🎉 at the cafe tonight');
  await send(bc, ben, 'tonight is movie night');
  await tick();
  const later = await send(ab, ann, 'Tomorrow we meet at noon');

  t.same(await found(ben, 'creme'), ['Crème brûlée at the CAFÉ tonight'], 'a word, folded: crème is creme');
  t.same(await found(ben, 'CAFÉ'), ['Crème brûlée at the CAFÉ tonight'], 'the query is folded too; only the chats ben is in');
  t.same(await found(ann, 'cafe'), ['party 🎉 at the cafe tonight', 'Crème brûlée at the CAFÉ tonight'], 'newest first across the chats ann is in');
  t.same(await found(ann, '开会'), ['我们明天开会'], 'Chinese without spaces: 开会 finds 我们明天开会');
  t.same(await found(cat, '🎉'), ['party 🎉 at the cafe tonight'], 'an emoji');
  t.same(await found(ben, 'tonight mov'), ['tonight is movie night'], 'every word, the last as a prefix (as one types)');
  t.same(await found(ann, 'tom'), ['Tomorrow we meet at noon'], 'a prefix alone');
  t.same(await found(ann, 'tonight noon'), [], 'every word must be in the message');
  const hit = (await search(ben, 'creme cafe')).body.hits[0];
  t.same([hit.chatId, hit.matches], [ab, [[0, 5], [20, 24]]], 'a hit names its chat and where the words are (UTF-16 offsets)');

  // Filters.
  t.same(await found(ann, 'tonight', { senderId: ann.userId }), ['party 🎉 at the cafe tonight', 'Crème brûlée at the CAFÉ tonight'], 'by sender');
  t.same(await found(ann, 'tonight', { chatIds: ac }), ['party 🎉 at the cafe tonight'], 'in some chats');
  t.same(await found(ann, 'tonight', { chatIds: bc }), [], 'a chat one is not in is never searched, even when named');
  t.same(await found(ann, 'at', { after: creme.timeStamp, before: later.timeStamp }), ['party 🎉 at the cafe tonight'], 'between two times');

  // Threads: a reply is found, and filtered.
  const reply = await it.node.post(`/api/messages/${ab}`, { content: 'Brûlée needs a torch', parentId: creme.messageId }, ben.jwt);
  t.equal(reply.status, 201, reply.text);
  t.same(await found(ann, 'brulee'), ['Brûlée needs a torch', 'Crème brûlée at the CAFÉ tonight'], 'a reply is found');
  t.same(await found(ann, 'brulee', { inThread: 'true' }), ['Brûlée needs a torch'], 'only replies');
  t.same(await found(ann, 'brulee', { inThread: 'false' }), ['Crème brûlée at the CAFÉ tonight'], 'no replies');
  t.equal((await search(ann, 'torch')).body.hits[0].message.parentId, creme.messageId, 'a reply names its parent');

  // Edits, deletions, hiding, blocks, leaving, tenancy.
  const edited = await send(ac, cat, 'see you at the lighthouse');
  t.equal((await it.node.put(`/api/messages/${ac}/${edited.messageId}`, { content: 'see you at the harbour' }, cat.jwt)).status, 200);
  t.same(await found(ann, 'harbour'), ['see you at the harbour'], 'an edit: its new words are found');
  t.same(await found(ann, 'lighthouse'), [], 'its old words are not');
  const gone = await send(ab, ben, 'a secret recipe');
  t.equal((await it.node.del(`/api/messages/${ab}/${gone.messageId}`, ben.jwt)).status, 200);
  t.same(await found(ann, 'recipe'), [], 'a deleted message is not found');
  t.equal((await it.node.put('/api/moderation/settings', { flagHideThreshold: 1 }, it.apiKey)).status, 200);
  const flagged = await send(ab, ben, 'buy cheap watches');
  t.equal((await it.node.post(`/api/messages/${ab}/${flagged.messageId}/flags`, { reason: 'spam' }, ann.jwt)).status, 201);
  t.same(await found(ann, 'watches'), [], 'a message hidden pending review is not found');
  t.equal((await it.node.post('/api/users/me/blocks', { userId: ann.userId }, cat.jwt)).status, 201);
  t.same(await found(cat, 'party'), [], "a blocked user's messages are left out for the blocker");
  t.equal((await it.node.post(`/api/chats/${ab}/leave`, undefined, ben.jwt)).status, 204);
  t.same(await found(ben, 'creme'), [], 'a chat one has left is not searched');
  const other = await integration(svc, 'search-other');
  const stranger = await other.user('ann');
  t.same((await other.node.get('/api/search/messages?q=tonight', stranger.jwt)).body.hits, [], "another application's messages are never found");
  const all = await it.node.get('/api/search/all-messages?q=tonight', it.apiKey);
  t.same(all.body.hits.map((h: { message: { content: string } }) => h.message.content), ['tonight is movie night', 'party 🎉 at the cafe tonight', 'Crème brûlée at the CAFÉ tonight'], 'the backend searches every chat of its application');
  t.same((await other.node.get('/api/search/all-messages?q=tonight', other.apiKey)).body.hits, [], 'and another application’s backend none of them');

  // Pages: 25 messages with one word, 10 a page, each once.
  for (let i = 0; i < 25; i++) await send(ac, ann, `agenda item ${i}`);
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 5; page++) {
    const r = await search(ann, 'agenda', { size: '10', ...(cursor ? { cursor } : {}) });
    seen.push(...r.body.hits.map((h: { message: { content: string } }) => h.message.content));
    cursor = r.body.nextCursor;
    if (!cursor) break;
  }
  t.same(seen, Array.from({ length: 25 }, (_, i) => `agenda item ${24 - i}`), 'paged in tens: each once, newest first');

  // Bad queries: 400 naming the field.
  t.match(await search(ann, '!!!'), { status: 400, body: { code: 'VALIDATION_FAILED', errors: [{ path: '/query/q' }] } }, 'a query with no word');
  t.match(await search(ann, 'a b c d e f g h i'), { status: 400, body: { errors: [{ path: '/query/q' }] } }, 'more than 8 words');
  t.match(await search(ann, 'x'.repeat(201)), { status: 400 }, 'more than 200 characters');
  t.match(await search(ann, 'agenda', { cursor: 'not-a-cursor' }), { status: 400, body: { errors: [{ path: '/query/cursor' }] } }, 'a cursor this route did not give');
  t.match(await search(ann, 'agenda', { chatIds: 'nope' }), { status: 400, body: { errors: [{ path: '/query/chatIds' }] } }, 'chat ids that are not ids');

  // Relevance: a message with the word more often, and a short one, before the newest.
  const kayak = [
    'we could kayak, or swim, or hike, whatever the weather and the tide let us do that day',
    'kayak kayak kayak: the kayak trip is on',
    'kayak?',
    'bring a towel and some water for the kayak trip, and sunscreen, and a hat for the sun',
  ];
  for (const content of kayak) await send(ac, ann, content);
  const contents = async (params: Record<string, string>) => (await search(ann, 'kayak', params)).body.hits.map((h: { message: { content: string } }) => h.message.content);
  t.same(await contents({}), [...kayak].reverse(), 'newest first by default');
  t.same((await contents({ order: 'relevance' })).slice(0, 2), ['kayak kayak kayak: the kayak trip is on', 'kayak?'], 'by relevance: the word most often, then the shortest message');
  const ranked: string[] = [];
  cursor = undefined;
  for (let page = 0; page < 5; page++) {
    const r = await search(ann, 'kayak', { order: 'relevance', size: '1', ...(cursor ? { cursor } : {}) });
    ranked.push(...r.body.hits.map((h: { message: { content: string } }) => h.message.content));
    cursor = r.body.nextCursor;
    if (!cursor) break;
  }
  await send(ac, cat, 'kayak kayak kayak kayak kayak');
  t.equal(ranked.length, kayak.length, 'paged by relevance: each once');
  t.same(ranked, await contents({ order: 'relevance' }).then((all: string[]) => all.filter((c) => c !== 'kayak kayak kayak kayak kayak')), 'the same order as one page');
  t.match(await search(ann, 'kayak', { order: 'relevance', cursor: Buffer.from('x').toString('base64url') }), { status: 400, body: { errors: [{ path: '/query/cursor' }] } }, 'a cursor of another order');
  t.match(await search(ann, 'kayak', { order: 'best' }), { status: 400, body: { errors: [{ path: '/query/order' }] } }, 'an unknown order');
});

t.test('SEARCH_INDEX=off: sends are stored, nothing is indexed, and the search routes answer 503', async (t) => {
  const svc = await startService({ SEARCH_INDEX: 'off' });
  t.teardown(() => svc.stop());
  const it = await integration(svc, 'search-off');
  const ann = await it.user('ann');
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'off', memberIds: [] }, ann.jwt)).body.chatId as string;
  t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'nothing to find' }, ann.jwt)).status, 201, 'a send is stored');
  t.match(await it.node.get('/api/search/messages?q=nothing', ann.jwt), { status: 503, body: { code: 'UNAVAILABLE' } }, 'a user search: 503 UNAVAILABLE');
  t.match(await it.node.get('/api/search/all-messages?q=nothing', it.apiKey), { status: 503, body: { code: 'UNAVAILABLE' } }, 'the backend search too');
});
