import t from 'tap';
import { integration } from '../helpers/index.ts';
import { onBothStores } from '../helpers/both-stores.ts';

// A message carries a summary of its reactions, not all of them (README, "Reactions"): a count per
// value, the latest 10 and the reader's own; the full list pages from its own route.
const VALUES = Array.from({ length: 20 }, (_, i) => `r${String(i).padStart(2, '0')}`);

await onBothStores(t, 'a message with 500 reactions is small in history, and its full list pages in full', async (t, svc) => {
  const it = await integration(svc, 'reactions');
  const users = [];
  for (let i = 0; i < 25; i++) users.push(await it.user(`m${i}`));
  const [owner, ...others] = users;
  const chat = (await it.node.post('/api/chats', { type: 'group', name: 'busy', memberIds: others.map((u) => u.userId) }, owner!.jwt)).body;
  const sent = await it.node.post(`/api/messages/${chat.chatId}`, { content: 'react to me' }, owner!.jwt);
  const messageId = sent.body.message.messageId as string;
  const path = `/api/messages/${chat.chatId}/${messageId}/reactions`;

  // 25 members × 20 values: the 500 a message takes at most.
  await Promise.all(users.map(async (u) => {
    for (const reaction of VALUES) {
      const r = await it.node.post(path, { reaction }, u.jwt);
      if (r.status !== 200) throw new Error(`reaction refused: ${r.text}`);
    }
  }));
  const answer = await it.node.post(path, { reaction: 'one-more' }, owner!.jwt);
  t.equal(answer.status, 400, 'the 501st is refused');
  t.match(answer.body.errors, [{ path: '/body/reaction' }]);

  const page = await it.node.get(`/api/messages/getMessages/${chat.chatId}?size=10`, others[0]!.jwt);
  const message = page.body.messages.find((m: { messageId: string }) => m.messageId === messageId);
  const bytes = Buffer.byteLength(JSON.stringify(message));
  t.ok(bytes < 8192, `the message weighs ${bytes} bytes in a history page (under 8 KB)`);
  t.same(message.reactionCounts, Object.fromEntries(VALUES.map((v) => [v, 25])), 'a count per value, over all 500');
  t.equal(message.reactions.length, 10, 'the latest 10 reactions');
  t.same(new Set(message.ownReactions), new Set(VALUES), "and the reader's own values");

  // The full list, in pages of 100 (oldest first): every reaction once.
  const seen: string[] = [];
  let after: string | undefined;
  let pages = 0;
  do {
    const r = await it.node.get(`${path}?limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`, owner!.jwt);
    t.equal(r.status, 200);
    seen.push(...r.body.reactions.map((x: { reactionId: string }) => x.reactionId));
    after = r.body.next;
    pages++;
  } while (after && pages < 10);
  t.equal(pages, 5, 'five pages of 100');
  t.equal(seen.length, 500, 'all 500 listed');
  t.equal(new Set(seen).size, 500, 'none twice');
  t.same(seen.slice(-10), message.reactions.map((r: { reactionId: string }) => r.reactionId), "the message's latest 10 are the list's last 10");

  // One value's reactions; a reaction removed between two pages moves nothing.
  const first = await it.node.get(`${path}?limit=10&reaction=r07`, owner!.jwt);
  t.equal(first.body.reactions.length, 10);
  t.ok(first.body.reactions.every((r: { reaction: string }) => r.reaction === 'r07'), 'only the value asked for');
  const rest = first.body.reactions.map((r: { senderId: string }) => r.senderId);
  // Not the owner, whose own values the last check counts.
  const leaving = others.find((u) => !rest.includes(u.userId))!;
  t.equal((await it.node.del(`${path}/r07`, leaving.jwt)).status, 200);
  const remaining: string[] = [...first.body.reactions.map((r: { reactionId: string }) => r.reactionId)];
  for (after = first.body.next; after; ) {
    const r = await it.node.get(`${path}?limit=10&reaction=r07&after=${encodeURIComponent(after)}`, owner!.jwt);
    remaining.push(...r.body.reactions.map((x: { reactionId: string }) => x.reactionId));
    after = r.body.next;
  }
  t.equal(remaining.length, 24, 'the 24 left of that value');
  t.equal(new Set(remaining).size, 24, 'each once');

  // A removal's answer to its maker says which values it still holds.
  const removed = await it.node.del(`${path}/r00`, owner!.jwt);
  t.equal(removed.body.message.reactionCounts.r00, 24);
  t.notOk(removed.body.message.ownReactions.includes('r00'), 'the answer to its maker lists its own values without it');
  t.equal(removed.body.message.ownReactions.length, 19);

  const bad = await it.node.get(`${path}?limit=1000`, owner!.jwt);
  t.equal(bad.status, 400);
  t.match(bad.body.errors, [{ path: '/query/limit' }], 'a limit past 100 names the field');
  t.equal((await it.node.get(path, (await it.user('outsider')).jwt)).status, 404, 'a non-member sees nothing');
});
