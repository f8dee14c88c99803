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
    t.ok(Number(r.rssAfterMiB) > 0 && typeof r.rssSlopeBytes === 'number' && typeof r.rssBytesPerConnectionFromStart === 'number', `${r.system}: memory measured`);
    // Read after a full collection in the server (bench/lib/gc-on-signal.mjs). At 200 connections
    // its sign is noise (V8 flushes startup bytecode in the same collections), so only its presence
    // is checked here.
    t.type(r.heapBytesPerConnection, 'number', `${r.system}: the live heap was read from the server`);
  }
});
