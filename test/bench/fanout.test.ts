import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test('fanout smoke: every system delivers every message to every member, with a latency distribution, CPU per message and an overload run', async (t) => {
  // A loose latency limit: this checks what is measured, not how fast a busy machine is (a sweep
  // that fails its first step finds no rate, and then there is nothing to overload).
  const run = await bench(['fanout', '--smoke', '--workers', '1', '--p99', '1000']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'fanout', ['fanout-latency', 'fanout-throughput']);
  const { rows, summary } = run.result('fanout');
  for (const system of ['chat', 'uws', 'socketio']) {
    const mine = rows.filter((r) => r.system === system);
    const phases = mine.map((r) => r.phase);
    t.ok(phases.includes('sweep') && phases.includes('70% of max'), `${system}: a sweep and a run at 70%`);
    t.equal(phases[phases.length - 1], 'overload (2× max)', `${system}: the overload run comes last`);
    for (const r of mine) {
      t.equal(r.deliveredPct, 100, `${system} ${r.phase} at ${r.offeredPerSecond}/s: every member got every accepted message`);
      t.ok(Number(r.sentPerSecond) > 0 && Number(r.p50Ms) > 0 && Number(r.p99Ms) >= Number(r.p50Ms), `${system}: sends and ordered percentiles`);
      t.ok(Number(r.nodeCpuUsPerMessage) > 0, `${system}: server CPU per acknowledged message`);
      // Read for every system (on Linux): a share of the server's CPU (at smoke rates a peer's may round to no tick of 10 ms).
      t.ok(typeof r.serverKernelPct === 'number' && r.serverKernelPct >= 0 && r.serverKernelPct <= 100, `${system} ${r.phase}: ${r.serverKernelPct}% of the server's CPU in the kernel`);
      t.match(r, { refused: 0, refusedByCode: null, refusalP99Ms: null, unanswered: 0 }, `${system} ${r.phase}: every send answered, none refused at these rates`);
      t.equal(r.redisCpuCores, undefined, 'no Redis on a single node');
      // The nodes' own view of a send's time: this service only (the peers expose no metrics).
      if (system === 'chat') {
        // Means of well under 0.05 ms round to 0 on a store that syncs to memory: present, not positive.
        t.ok(Number(r.ackMeanMs) >= 0 && Number(r.storeWriteMeanMs) >= 0 && Number(r.writesPerBatch) >= 1, `chat ${r.phase}: ack wait ${r.ackMeanMs} ms, store write ${r.storeWriteMeanMs} ms, ${r.writesPerBatch} writes a batch`);
        t.ok(Number(r.ackP99UpToMs) > 0 && Number(r.gcMsPerNodeSecond) >= 0 && Number(r.gcPausesOver10Ms) >= 0, `chat ${r.phase}: ack p99 ≤ ${r.ackP99UpToMs} ms, GC ${r.gcMsPerNodeSecond} ms a node-second`);
        t.ok(Number(r.eventLoopBusyPct) > 0 && Number(r.storeCommitsPerSecond) > 0 && Number(r.storePagesPerMessage) > 0, `chat ${r.phase}: event loop ${r.eventLoopBusyPct}% busy, ${r.storeCommitsPerSecond} LMDB commits/s, ${r.storePagesPerMessage} pages a message`);
      } else t.equal(r.ackMeanMs, undefined, `${system}: no node metrics for a peer`);
    }
    const { maxRate, overload } = summary[system] as { maxRate: number; overload: Record<string, unknown> };
    t.ok(maxRate > 0, `${system}: a highest rate`);
    t.match(overload, { offeredPerSecond: maxRate * 2, phase: 'overload (2× max)', pctOfMax: Number, deliveredMsgsPerSecond: Number }, `${system}: overload offered at twice ${maxRate}/s`);
  }
  t.match(summary.ratios, { chatVsuws: Number, chatVssocketio: Number });
  t.match(summary.goal, { overload: { deliveredPctOfMax: { want: '≥ 80' }, p99Ms: { want: '< 2000' }, unanswered: { want: 0 }, refusalP99Ms: { want: '< 500' }, met: Boolean } });
  const report = run.file('RESULTS.md')!;
  for (const heading of ['node CPU µs / msg', '### Overload', '% of highest rate', 'refused by code', 'refusal p99 ms', 'unanswered', "### Where a send's time goes", 'ack wait mean ms', 'GC ms per node-second', 'event loop busy %', 'LMDB pages per message', 'server CPU in the kernel %']) t.match(report, heading, `RESULTS.md shows ${heading}`);
  t.notMatch(report, 'Cassandra', 'no Cassandra columns on a single node');
});

t.test('--no-overload skips the overload run', async (t) => {
  const run = await bench(['fanout', '--smoke', '--workers', '1', '--systems', 'uws', '--rate', '50', '--p99', '1000', '--no-overload']);
  t.teardown(run.cleanup);
  t.equal(run.code, 0, run.stderr);
  const { rows, summary } = run.result('fanout');
  t.same(rows.map((r) => r.phase), ['fixed'], 'the run at the fixed rate only');
  t.equal((summary.uws as { overload?: unknown }).overload, undefined);
  t.notMatch(run.file('RESULTS.md'), '### Overload');
});
