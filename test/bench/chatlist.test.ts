import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test('chatlist smoke: a user filled to the chat cap and a user with one chat, listed at each page size', async (t) => {
  const run = await bench(['chatlist', '--smoke', '--workers', '1', '--chats', '30', '--sizes', '1,5']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'chatlist', ['chatlist']);
  const { rows, summary, parameters } = run.result('chatlist');
  t.equal(parameters.cap, 30);
  t.same(rows.map((r) => [r.store, r.size, r.userChats]), [['embedded', 1, 1], ['embedded', 1, 30], ['embedded', 5, 1], ['embedded', 5, 30]]);
  for (const r of rows) {
    t.ok(Number(r.requestsPerSecond) > 0, `size ${r.size}, ${r.userChats} chats: lists served`);
    t.equal(r.errors, 0);
  }
  t.type(rows[1]!.p50VsOneChat, 'number', 'the full user is compared with the one-chat user');
  t.match(summary, { embedded: { costRatio: Number, goal: { want: '≤ 2' } } });
});
