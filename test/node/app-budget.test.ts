import t from 'tap';
import { integration, startService, WsClient } from '../helpers/index.ts';

// APP_ACTIONS_PER_SECOND (README, Limits): all of an application's users share one budget of chat
// actions per node, so one tenant's load cannot fill the queues the others share; another
// application's users keep theirs.
const svc = await startService({ APP_ACTIONS_PER_SECOND: '8', USER_WRITES_PER_SECOND: '1000', USER_SENDS_PER_SECOND: '1000', WS_ACTIONS_PER_SECOND: '1000' });
t.teardown(() => svc.stop());
const [loud, quiet] = [await integration(svc, 'loud'), await integration(svc, 'quiet')];

t.test("an application's users share one budget of actions; another application's are untouched", async (t) => {
  const [a, b] = [await loud.user('a'), await loud.user('b')];
  const [c, d] = [await quiet.user('c'), await quiet.user('d')];
  const loudChat = (await loud.node.post('/api/chats', { type: 'direct', userId: b.userId }, a.jwt)).body.chatId as string;
  const quietChat = (await quiet.node.post('/api/chats', { type: 'direct', userId: d.userId }, c.jwt)).body.chatId as string;
  // A fresh second for both budgets (the creations above counted).
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const [wa, wb] = [await WsClient.connect(svc.nodeUrl, a.jwt), await WsClient.connect(svc.nodeUrl, b.jwt)];
  t.teardown(() => Promise.all([wa.close(), wb.close()]));
  // One burst, the REST send among the socket actions: the budget (8, refilled at 8 a second)
  // takes eight of the eleven however they interleave; were REST outside it, nine would pass.
  const [rest, ...replies] = await Promise.all([
    loud.node.post(`/api/messages/${loudChat}`, { content: 'over REST' }, a.jwt),
    ...Array.from({ length: 4 }, (_, i) => wa.request({ type: 'message.send', chatId: loudChat, content: `a${i}` })),
    ...Array.from({ length: 3 }, () => wb.request({ type: 'typing.start', chatId: loudChat })),
    ...Array.from({ length: 3 }, () => wb.request({ type: 'read.mark', chatId: loudChat, seq: 1 })),
  ]);
  const refused = replies.filter((f) => f.type === 'error');
  const restTaken = rest.status === 201;
  if (!restTaken) {
    t.equal(rest.status, 429, 'REST refused as over the budget');
    t.match(rest.body.detail, /application/, 'naming the application budget');
  }
  t.equal(replies.length - refused.length + (restTaken ? 1 : 0), 8, "eight actions in the burst are taken, over REST and WebSocket, whichever of the application's users made them");
  for (const f of refused) {
    t.equal(f.code, 'RATE_LIMITED');
    t.match(f.message, /application/, 'naming the application budget');
  }
  const other = await quiet.node.post(`/api/messages/${quietChat}`, { content: 'my own budget' }, c.jwt);
  t.equal(other.status, 201, "another application's user sends in the same second");
});
