import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test("threads smoke: the inbox of a user following many threads and of one following one", async (t) => {
  const run = await bench(['threads', '--smoke', '--workers', '1', '--threads', '25', '--size', '10']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'threads', ['threads']);
  const { rows, summary, parameters } = run.result('threads');
  t.same([parameters.followed, parameters.size], [25, 10]);
  t.same(rows.map((r) => [r.store, r.followed]), [['embedded', 1], ['embedded', 25]]);
  for (const r of rows) {
    t.ok(Number(r.requestsPerSecond) > 0, `${r.followed} followed: inboxes served`);
    t.equal(r.errors, 0);
  }
  t.match(summary, { embedded: { p99Ms: Number, goal: { want: 'p99 < 20 ms' } } });
});
