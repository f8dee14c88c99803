import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test("flood smoke: a quiet tenant's latency alone and while another tenant's sockets send every action at the limits", async (t) => {
  const run = await bench(['flood', '--smoke', '--workers', '1', '--sockets', '10']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'flood', ['flood']);
  const { rows, summary } = run.result('flood');
  t.same(rows.map((r) => r.phase), ['quiet tenant alone', 'quiet tenant during the flood']);
  for (const r of rows) t.ok(Number(r.deliveredPerSecond) > 0, `${r.phase}: delivered`);
  const during = rows[1]!;
  t.ok(Number(during.floodActionsPerSecond) > 0, 'the flood sent');
  t.ok(Number(during.floodAcceptedPerSecond) > 0, 'and part of it was taken');
  t.equal(during.floodUnanswered, 0, 'every flood action was answered');
  t.match(summary, { p99AloneMs: Number, p99DuringFloodMs: Number, p99Ratio: Number, goal: { want: /p99 < 50 ms/ } });
});
