import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test('connections smoke: every connection opens (authenticated on this service) and memory is measured', async (t) => {
  const run = await bench(['connections', '--smoke', '--workers', '2', '--connections', '200', '--addresses', '2']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'connections', ['connections']);
  const { rows } = run.result('connections');
  t.same(rows.map((r) => r.system), ['chat', 'uws', 'socketio']);
  for (const r of rows) {
    t.equal(r.connections, 200, `${r.system}: all 200 open`);
    t.equal(r.failed, 0);
    t.ok(Number(r.rssAfterMiB) > 0 && typeof r.rssBytesPerConnection === 'number', `${r.system}: memory measured`);
  }
});
