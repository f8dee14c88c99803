import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test('blocklist smoke: sends without and with a blocklist, none refused', async (t) => {
  const run = await bench(['blocklist', '--smoke', '--workers', '1']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'blocklist', ['blocklist']);
  const { rows, summary } = run.result('blocklist');
  t.same(rows.map((r) => r.mode), ['no blocklist', '100 entries'], 'one round: none, then the list');
  for (const r of rows) {
    t.ok(Number(r.ackedPerSecond) > 0, `${r.mode}: acked sends`);
    t.equal(r.errors, 0, `${r.mode}: no send refused (the messages match no entry)`);
  }
  t.ok(Number((summary as { ratios: { sends: number } }).ratios.sends) > 0, 'the ratio is reported');
  t.match(run.file('RESULTS.md'), /With the blocklist ÷ without/);
});
