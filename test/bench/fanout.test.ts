import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test('fanout smoke: every system delivers every message to every member, with a latency distribution', async (t) => {
  const run = await bench(['fanout', '--smoke', '--workers', '1']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'fanout', ['fanout-latency', 'fanout-throughput']);
  const { rows, summary } = run.result('fanout');
  for (const system of ['chat', 'uws', 'socketio']) {
    const mine = rows.filter((r) => r.system === system);
    t.ok(mine.length >= 2, `${system}: a sweep and a run at 70%`);
    for (const r of mine) {
      t.equal(r.deliveredPct, 100, `${system} at ${r.offeredPerSecond}/s: every member got every message`);
      t.ok(Number(r.sentPerSecond) > 0 && Number(r.p50Ms) > 0 && Number(r.p99Ms) >= Number(r.p50Ms), `${system}: sends and ordered percentiles`);
      t.equal(r.sendErrors, 0);
    }
    t.ok((summary[system] as { maxRate: number }).maxRate > 0, `${system}: a highest rate`);
  }
  t.match(summary.ratios, { chatVsuws: Number, chatVssocketio: Number });
});
