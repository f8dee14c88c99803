import t from 'tap';
import { integration, startService, WsClient, type Frame } from '../helpers/index.ts';
import { retryAfterSeconds } from '../helpers/problem.ts';

// Every write a chat user makes has a per-user rate (README, Limits): edits, deletes, reactions,
// read marks and chat changes share USER_WRITES_PER_SECOND across REST and WebSocket and across
// the user's sockets; typing indicators have USER_TYPING_PER_SECOND. And a message's reactions
// are bounded in all, not only in distinct values.
const svc = await startService({ USER_WRITES_PER_SECOND: '6', USER_TYPING_PER_SECOND: '2', WS_ACTIONS_PER_SECOND: '1000', USER_SENDS_PER_SECOND: '1000' });
t.teardown(() => svc.stop());
const it = await integration(svc, 'writes');

const refusedOnes = (frames: Frame[]) => frames.filter((f) => f.type === 'error' && f.code === 'RATE_LIMITED');

t.test('edits, deletes, reactions and read marks share one per-user budget across sockets and REST', async (t) => {
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chatId = (await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt)).body.chatId as string;
  const sent = await it.node.post(`/api/messages/${chatId}`, { content: 'hello' }, alice.jwt);
  const messageId = sent.body.message.messageId as string;
  // The window is one second: wait for a fresh one so the creation above does not count against it.
  await new Promise((resolve) => setTimeout(resolve, 1100));

  const [one, two] = [await WsClient.connect(svc.nodeUrl, alice.jwt), await WsClient.connect(svc.nodeUrl, alice.jwt)];
  t.teardown(() => Promise.all([one.close(), two.close()]));
  const replies = await Promise.all([
    ...['a', 'b', 'c'].map((r) => one.request({ type: 'reaction.add', chatId, messageId, reaction: r })),
    ...['x', 'y'].map((content) => two.request({ type: 'message.edit', chatId, messageId, content })),
    two.request({ type: 'read.mark', chatId, seq: 1 }),
    one.request({ type: 'reaction.remove', chatId, messageId, reaction: 'a' }),
    two.request({ type: 'message.edit', chatId, messageId, content: 'z' }),
  ]);
  const rest = await it.node.put(`/api/messages/${chatId}/${messageId}`, { content: 'over REST' }, alice.jwt);
  const refused = refusedOnes(replies);
  t.equal(replies.length - refused.length, 6, 'six writes in the second are taken, whichever socket carried them');
  t.equal(refused.length, 2, 'the rest are refused');
  for (const f of refused) t.ok(Number(f.retryAfter) >= 1, `with a retry hint (${f.retryAfter})`);
  t.equal(rest.status, 429, 'over REST too, the same budget');
  t.equal(rest.body.code, 'RATE_LIMITED');
  t.ok(retryAfterSeconds(rest) >= 1, 'with Retry-After');
  t.equal((await it.node.put(`/api/messages/${chatId}/${messageId}`, { content: 'bob cannot' }, bob.jwt)).body.code, 'NOT_ALLOWED', "another user's budget is separate (bob reaches the author check)");

  await new Promise((resolve) => setTimeout(resolve, 1100));
  t.equal((await it.node.put(`/api/messages/${chatId}/${messageId}`, { content: 'next second' }, alice.jwt)).status, 200, 'the next second has a fresh budget');
});

t.test('typing indicators have their own per-user rate', async (t) => {
  const [carol, dave] = [await it.user('carol'), await it.user('dave')];
  const chatId = (await it.node.post('/api/chats', { type: 'direct', userId: dave.userId }, carol.jwt)).body.chatId as string;
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const ws = await WsClient.connect(svc.nodeUrl, carol.jwt);
  t.teardown(() => ws.close());
  const replies = await Promise.all(Array.from({ length: 5 }, (_, i) => ws.request({ type: i % 2 ? 'typing.stop' : 'typing.start', chatId })));
  t.equal(refusedOnes(replies).length, 3, 'two typing indicators a second, the rest refused');
  t.equal((await ws.request({ type: 'message.send', chatId, content: 'sends are not typing' })).type, 'ack', 'sends have their own budget');
});

t.test("a message's reactions are bounded per user and in all", async (t) => {
  const users = await Promise.all(Array.from({ length: 26 }, (_, i) => it.user(`r${i}`)));
  const [owner, ...others] = users;
  const chat = await it.node.post('/api/chats', { type: 'group', name: 'reactions', memberIds: others.map((u) => u.userId) }, owner!.jwt);
  const chatId = chat.body.chatId as string;
  const messageId = (await it.node.post(`/api/messages/${chatId}`, { content: 'react to me' }, owner!.jwt)).body.message.messageId as string;
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const react = (u: (typeof users)[number], reaction: string) => it.node.post(`/api/messages/${chatId}/${messageId}/reactions`, { reaction }, u.jwt);
  /**
   * Adds reactions one user at a time, within the per-user write rate; one refused for a busy
   * moment (429: 25 users react at once to one message of one chat) is sent again after its
   * Retry-After, as a client would.
   */
  async function reactAll(u: (typeof users)[number], values: string[]) {
    const out = [];
    for (const [i, v] of values.entries()) {
      if (i > 0 && i % 6 === 0) await new Promise((resolve) => setTimeout(resolve, 1050));
      let res = await react(u, v);
      for (let attempt = 0; res.status === 429 && attempt < 5; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, retryAfterSeconds(res) * 1000));
        res = await react(u, v);
      }
      out.push(res);
    }
    return out;
  }
  const mine = await reactAll(owner!, Array.from({ length: 21 }, (_, i) => `v${i}`));
  t.same(mine.slice(0, 20).map((r) => r.status), Array(20).fill(200), `twenty values of one user are taken (${mine.map((r) => r.body.code ?? r.status).join(' ')})`);
  t.equal(mine[20]!.status, 400, 'the twenty-first is refused');
  t.equal(mine[20]!.body.code, 'VALIDATION_FAILED');
  t.match(mine[20]!.body.detail, /20 reactions per user/);
  // 25 more users × 20 values: 500 in all, then no more from anyone.
  await Promise.all(others.map((u) => reactAll(u, Array.from({ length: 20 }, (_, i) => `v${i}`))));
  const message = (await it.node.get(`/api/messages/getMessages/${chatId}?size=1`, owner!.jwt)).body.messages[0];
  // A message shows its latest 10 and a count per value (README, "Reactions"): 500 in all.
  t.equal(Object.values(message.reactionCounts as Record<string, number>).reduce((a, b) => a + b, 0), 500, 'five hundred reactions in all');
  t.equal(message.reactions.length, 10, 'the latest ten of them on the message');
  const over = await react(others[0]!, 'one more');
  t.equal(over.status, 400);
  t.match(over.body.detail, /500 reactions in all/);
});
