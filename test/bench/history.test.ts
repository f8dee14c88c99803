import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test('history smoke: chats filled to each depth, pages served from the newest and from anywhere', async (t) => {
  const run = await bench(['history', '--smoke', '--workers', '1', '--depths', '40,400']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'history', ['history']);
  const { rows, summary } = run.result('history');
  t.same(rows.map((r) => [r.depth, r.page]), [[40, 'newest'], [40, 'anywhere'], [400, 'newest'], [400, 'anywhere']]);
  for (const r of rows) {
    t.ok(Number(r.requestsPerSecond) > 0, `depth ${r.depth} ${r.page}: pages served`);
    t.equal(r.errors, 0);
  }
  t.match(summary, { newest: { smallest: 40, deepest: 400 }, goal: { deepestWithin: 1.2 } });
});
