import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test('sends smoke: acknowledged sends over WebSocket and HTTP on every system, without errors', async (t) => {
  const run = await bench(['sends', '--smoke', '--workers', '1']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'sends', ['sends']);
  const { rows } = run.result('sends');
  t.equal(rows.length, 6, 'three systems, two transports');
  for (const r of rows) {
    t.ok(Number(r.ackedPerSecond) > 0, `${r.system} over ${r.transport}: acked sends`);
    t.equal(r.errors, 0, `${r.system} over ${r.transport}: no errors`);
    if (r.system === 'chat') t.same([r.shedByNode, r.refusedChatBusy], [0, 0], `chat over ${r.transport}: refusals counted by bound (load shedder, busy chats), none`);
  }
  t.match(run.file('RESULTS.md'), /chat ÷ uws/, 'the table shows ratios to the peers');
});
