import t from 'tap';
import { integration, WsClient } from '../helpers/index.ts';
import { onBothStores } from '../helpers/both-stores.ts';

// An application's own data on messages, users and chats (README, "Custom data"): stored and
// returned as given, at most 4 KB encoded and 8 levels deep; and system messages, which only the
// backend sends (with its API key).
const sized = (bytes: number) => ({ k: 'x'.repeat(bytes - 8) }); // {"k":"…"} is 8 bytes around the string
const deep = (levels: number): Record<string, unknown> => (levels <= 1 ? { leaf: 1 } : { next: deep(levels - 1) });

await onBothStores(t, 'custom data round-trips on messages, users and chats; 4 KB + 1 and 9 levels are refused naming the field', async (t, svc) => {
  const it = await integration(svc, 'custom');
  const { node, apiKey } = it;

  // Users (the backend's API key).
  const card = { plan: 'pro', tags: ['a', 'b'], nested: { n: 1, ok: true, none: null } };
  const created = await node.post('/api/users', { username: `ann-${process.pid}-${Date.now()}`, data: card }, apiKey);
  t.equal(created.status, 201);
  t.same(created.body.data, card, 'a user registered with data shows it');
  const annId = created.body.userId as string;
  t.same((await node.get(`/api/users/${annId}`, apiKey)).body.data, card, 'and reads it back');
  const renamed = await node.put(`/api/users/${annId}`, { displayName: 'Ann' }, apiKey);
  t.same([renamed.body.displayName, renamed.body.data], ['Ann', card], 'a new display name keeps the data');
  t.same((await node.put(`/api/users/${annId}`, { data: sized(4096) }, apiKey)).body.data, sized(4096), 'exactly 4 KB is taken');
  const big = await node.put(`/api/users/${annId}`, { data: sized(4097) }, apiKey);
  t.equal(big.status, 400, '4 KB + 1 is refused');
  t.match(big.body.errors, [{ path: '/body/data' }], 'naming the field');
  const tooDeep = await node.post('/api/users', { username: `deep-${process.pid}-${Date.now()}`, data: deep(9) }, apiKey);
  t.equal(tooDeep.status, 400, '9 levels are refused');
  t.match(tooDeep.body.errors, [{ path: '/body/data', message: /8 levels/ }]);
  t.equal((await node.post('/api/users', { username: `ok-${process.pid}-${Date.now()}`, data: deep(8) }, apiKey)).status, 201, '8 levels are taken');
  t.equal((await node.put(`/api/users/${annId}`, { data: {} }, apiKey)).body.data, undefined, '{} removes it');

  const [ben, cat] = [await it.user('ben'), await it.user('cat')];
  const ann = { userId: annId, jwt: (await node.post('/api/users/signin', { userId: annId }, apiKey)).body.jwt as string };

  // Chats.
  const group = await node.post('/api/chats', { type: 'group', name: 'with data', memberIds: [ben.userId, cat.userId], data: { topic: 'launch' } }, ann.jwt);
  t.same(group.body.data, { topic: 'launch' }, 'a group created with data shows it');
  const chatId = group.body.chatId as string;
  t.same((await node.get(`/api/chats/${chatId}`, ben.jwt)).body.data, { topic: 'launch' }, 'to every member');
  t.equal((await node.put(`/api/chats/${chatId}`, { data: { topic: 'mine' } }, ben.jwt)).status, 403, "a plain member does not change a group's data");
  const changed = await node.put(`/api/chats/${chatId}`, { data: { topic: 'v2' } }, ann.jwt);
  t.same([changed.body.name, changed.body.data], ['with data', { topic: 'v2' }], 'the owner changes the data; the name stays');
  const listed = (await node.get('/api/chats', cat.jwt)).body.chats.find((c: { chatId: string }) => c.chatId === chatId);
  t.same(listed.data, { topic: 'v2' }, 'the chat list shows it');
  t.match((await node.put(`/api/chats/${chatId}`, { data: sized(4097) }, ann.jwt)).body.errors, [{ path: '/body/data' }], 'a chat refuses 4 KB + 1, naming the field');
  const direct = await node.post('/api/chats', { type: 'direct', userId: ben.userId, data: { pinnedNote: 'hi' } }, cat.jwt);
  t.same(direct.body.data, { pinnedNote: 'hi' }, 'a direct chat takes data at creation');
  t.same((await node.put(`/api/chats/${direct.body.chatId}`, { data: { pinnedNote: 'bye' } }, ben.jwt)).body.data, { pinnedNote: 'bye' }, 'and either member changes it');
  t.equal((await node.put(`/api/chats/${direct.body.chatId}`, { name: 'x' }, ben.jwt)).status, 403, 'a direct chat still has no name');

  // Messages, over REST and WebSocket.
  const poll = { poll: { id: 'p1', options: ['yes', 'no'] } };
  const sent = await node.post(`/api/messages/${chatId}`, { content: 'vote', data: poll }, ann.jwt);
  t.equal(sent.status, 201);
  t.same([sent.body.message.data, sent.body.message.type], [poll, 'regular'], 'a message sent with data carries it, as a regular message');
  const ws = await WsClient.connect(svc.nodeUrl, ben.jwt);
  t.teardown(() => ws.close());
  const overWs = await ws.request({ type: 'message.send', chatId, content: '', data: poll });
  t.match(overWs, { type: 'error', code: 'VALIDATION_FAILED', message: /^\/content:/ }, 'empty content needs attachments, data or not');
  const wsSent = await ws.request({ type: 'message.send', chatId, content: 'card', data: { card: 1 } });
  t.same(wsSent.result.message.data, { card: 1 }, 'over WebSocket too');
  t.match(await ws.request({ type: 'message.send', chatId, content: 'big', data: sized(4097) }), { type: 'error', code: 'VALIDATION_FAILED', message: /^\/data: must be at most 4096 bytes/ }, 'a frame with 4 KB + 1 is refused naming the field');
  const dataOnly = await ws.request({ type: 'message.edit', chatId, messageId: wsSent.result.message.messageId, data: { card: 2 } });
  t.same([dataOnly.result.message.content, dataOnly.result.message.data, dataOnly.result.message.edited], ['card', { card: 2 }, true], 'an edit of the data only keeps the content');
  const textOnly = await node.put(`/api/messages/${chatId}/${sent.body.message.messageId}`, { content: 'vote!' }, ann.jwt);
  t.same([textOnly.body.message.content, textOnly.body.message.data], ['vote!', poll], 'an edit of the content only keeps the data');
  t.equal((await node.put(`/api/messages/${chatId}/${sent.body.message.messageId}`, {}, ann.jwt)).status, 400, 'an edit changes something');
  const history = (await node.get(`/api/messages/getMessages/${chatId}`, cat.jwt)).body.messages;
  t.same(history.map((m: { data?: unknown }) => m.data), [{ card: 2 }, poll], 'history returns each message with its data');
  const tomb = await node.del(`/api/messages/${chatId}/${sent.body.message.messageId}`, ann.jwt);
  t.equal(tomb.body.message.data, undefined, "a deleted message's data goes with its content");

  // System messages: only with the API key, for a member; never edited by members.
  const system = await node.post(`/api/messages/${chatId}`, { content: 'Ann renamed the group', type: 'system', senderId: annId, data: { event: 'rename' } }, apiKey);
  t.equal(system.status, 201);
  t.same([system.body.message.type, system.body.message.senderId, system.body.message.data], ['system', annId, { event: 'rename' }], 'the backend sends a system message for a member');
  const forged = await node.post(`/api/messages/${chatId}`, { content: 'fake notice', type: 'system' }, ann.jwt);
  t.equal(forged.status, 403, 'a member cannot send one');
  t.match(forged.body.errors, [{ path: '/body/type' }]);
  t.match((await node.post(`/api/messages/${chatId}`, { content: 'who?' }, apiKey)).body.errors, [{ path: '/body/senderId' }], 'the API key names the sender');
  t.equal((await node.post(`/api/messages/${chatId}`, { content: 'as ben', senderId: ben.userId }, ann.jwt)).status, 403, 'a user sends only as itself');
  t.equal((await node.post(`/api/messages/${chatId}`, { content: 'outsider', senderId: (await it.user('out')).userId }, apiKey)).status, 404, 'the backend sends only for a member');
  t.equal((await node.put(`/api/messages/${chatId}/${system.body.message.messageId}`, { content: 'edited notice' }, ann.jwt)).status, 403, 'nor does its sender edit it');
  const regular = await node.post(`/api/messages/${chatId}`, { content: 'from the backend', senderId: cat.userId }, apiKey);
  t.same([regular.status, regular.body.message.type, regular.body.message.senderId], [201, 'regular', cat.userId], 'the backend sends a regular message for a member too');
  const seen = await ws.waitFor((f) => f.type === 'message.new' && f.message.messageId === system.body.message.messageId);
  t.same(seen.message.type, 'system', 'members receive it as a system message');
});
