import t from 'tap';
import { statementsPerMessage } from '../../bench/lib/cassandra-stats.ts';
import { parseNodeMetrics, sendTimeParts } from '../../bench/lib/node-metrics.ts';
import { bench } from '../helpers/bench.ts';
import { requireService } from '../helpers/index.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test('statements per message: deltas of the node-wide counters, the run keyspace per table', async (t) => {
  const before = { pools: { 'Native-Transport-Requests': 100, MutationStage: 50, ReadStage: 10 }, writes: { 'system.paxos': 20, 'ks.chat_messages': 5, 'other.t': 1 } };
  const after = { pools: { 'Native-Transport-Requests': 400, MutationStage: 650, ReadStage: 10 }, writes: { 'system.paxos': 320, 'ks.chat_messages': 205, 'ks.chats': 50, 'other.t': 900 } };
  t.same(statementsPerMessage(before, after, 'ks', 200), { requests: 1.5, mutations: 3, reads: 0, paxosWrites: 1.5, keyspaceWrites: 1.25, byTable: { chat_messages: 1, chats: 0.25 } });
  t.equal(statementsPerMessage(before, after, 'ks', 0), undefined, 'nothing to divide by');
});

t.test('send time parts: differences of the nodes\' metrics, summed over nodes', async (t) => {
  const text = (ack: [number, number, number[]], write: [number, number], gc: [number, number, number], refused: [number, number], embedded?: { loop: number; txns: number; pages: number }) =>
    [
      ...(embedded
        ? [`chat_event_loop_busy_seconds_total{service="node"} ${embedded.loop}`, `chat_store_transactions_total{service="node"} ${embedded.txns}`, `chat_store_pages_written_total{service="node"} ${embedded.pages}`]
        : []),
      '# HELP chat_ack_latency_seconds From a write entering its chat actor to it being durable',
      ...['0.01', '0.05', '0.1', '+Inf'].map((le, i) => `chat_ack_latency_seconds_bucket{le="${le}",service="node"} ${ack[2][i]}`),
      `chat_ack_latency_seconds_sum{service="node"} ${ack[0]}`,
      `chat_ack_latency_seconds_count{service="node"} ${ack[1]}`,
      `chat_store_write_seconds_sum{service="node"} ${write[0]}`,
      `chat_store_write_seconds_count{service="node"} ${write[1]}`,
      `nodejs_gc_duration_seconds_bucket{le="0.01",kind="minor"} ${gc[2]}`,
      `nodejs_gc_duration_seconds_sum{kind="minor"} ${gc[0]}`,
      `nodejs_gc_duration_seconds_count{kind="minor"} ${gc[1]}`,
      `chat_sends_shed_total{service="node"} ${refused[0]}`,
      `chat_writes_refused_busy_total{service="node"} ${refused[1]}`,
      'process_cpu_seconds_total 12',
    ].join('\n');
  // Two nodes alike, read before and after: 200 acks taking 4 s in all (150 within 10 ms, 196
  // within 50 ms: the 99th percentile is in the 100 ms bucket), 20 batches, 12 collections taking
  // 100 ms over 2 s, 2 of them over 10 ms; 3 sends shed by each node's load shedder and 5 writes
  // refused by a busy chat on each.
  const before = parseNodeMetrics(text([1, 100, [50, 90, 100, 100]], [0.1, 10], [0.05, 10, 10], [7, 1]));
  parseNodeMetrics(text([1, 100, [50, 90, 100, 100]], [0.1, 10], [0.05, 10, 10], [0, 0]), before);
  const after = parseNodeMetrics(text([3, 200, [125, 188, 200, 200]], [0.2, 20], [0.1, 16, 15], [10, 6]));
  parseNodeMetrics(text([3, 200, [125, 188, 200, 200]], [0.2, 20], [0.1, 16, 15], [3, 5]), after);
  const parts = { ackMeanMs: 20, ackP99UpToMs: 100, storeWriteMeanMs: 10, writesPerBatch: 10, gcMsPerNodeSecond: 25, gcPausesOver10Ms: 2, refusedNodeOverloaded: 6, refusedChatBusy: 10 };
  // Nodes without the event loop's and the embedded store's counters (Cassandra has no LMDB): none of those figures.
  t.same(sendTimeParts(before, after, 2, 2), { ...parts, eventLoopBusyPct: null, storeCommitsPerSecond: null, storePagesPerMessage: null });
  t.equal(sendTimeParts(before, before, 2, 2).ackMeanMs, null, 'no acks: no mean');
  // With them: each node's thread busy 1 s of the 2 (50%), 40 commits each (20 a second per node),
  // 1,000 pages written in all for the 200 acknowledged messages (5 each).
  const [b, a] = [{ loop: 5, txns: 100, pages: 1000 }, { loop: 6, txns: 140, pages: 1500 }];
  const embeddedBefore = parseNodeMetrics(text([1, 100, [50, 90, 100, 100]], [0.1, 10], [0.05, 10, 10], [7, 1], b));
  parseNodeMetrics(text([1, 100, [50, 90, 100, 100]], [0.1, 10], [0.05, 10, 10], [0, 0], b), embeddedBefore);
  const embeddedAfter = parseNodeMetrics(text([3, 200, [125, 188, 200, 200]], [0.2, 20], [0.1, 16, 15], [10, 6], a));
  parseNodeMetrics(text([3, 200, [125, 188, 200, 200]], [0.2, 20], [0.1, 16, 15], [3, 5], a), embeddedAfter);
  t.same(sendTimeParts(embeddedBefore, embeddedAfter, 2, 2), { ...parts, eventLoopBusyPct: 50, storeCommitsPerSecond: 20, storePagesPerMessage: 5 });
});

// This service on Cassandra and Redis, and the peers over Redis: the services must be running
// (scripts/services.sh start); outside CI the smoke run is skipped when they are not.
const cassandra = await requireService('cassandra', (line) => t.comment(line));
const redis = await requireService('redis', (line) => t.comment(line));
if (!cassandra || !redis) t.skip('cassandra or redis not running', () => undefined);
else {
  t.test('cluster smoke: three nodes per system, what each message costs, Cassandra statements, and an overload run', async (t) => {
    // The run uses the services found here (the CLI reads the same variables).
    process.env.CASSANDRA_CONTACT_POINTS = `${cassandra.host}:${cassandra.port}`;
    process.env.REDIS_URL = `redis://${redis.host}:${redis.port}`;
    // A loose latency limit: this checks what is measured, not how fast a busy machine is.
    const run = await bench(['cluster', '--smoke', '--workers', '1', '--p99', '2000'], 240_000);
    t.teardown(run.cleanup);
    checkOutputs(t, run, 'cluster', ['cluster-latency', 'cluster-throughput']);
    const { rows, summary } = run.result('cluster');
    for (const system of ['chat', 'uws', 'socketio']) {
      const mine = rows.filter((r) => r.system === system);
      t.same(mine.map((r) => r.phase), ['fixed', 'overload (2× max)'], `${system}: the run at the fixed rate, then at twice it`);
      for (const r of mine) {
        t.equal(r.deliveredPct, 100, `${system} ${r.phase}: every accepted send reached every member`);
        t.ok(Number(r.nodeCpuUsPerMessage) > 0, `${system} ${r.phase}: node CPU per message`);
        t.equal(r.unanswered, 0, `${system} ${r.phase}: every send answered`);
        // At the fixed rate nothing is refused. At twice it a send may be refused, as RATE_LIMITED only:
        // on a Cassandra fresh from its start a write can take far longer than the 100 ms a busy chat
        // lets writes wait (the smoke run's p99 reached 567 ms in CI), and refusing then is what the
        // service promises.
        if (r.phase === 'fixed') t.equal(r.refused, 0, `${system} fixed: none refused at this rate`);
        else t.match(String(r.refusedByCode ?? ''), /^(RATE_LIMITED \d+)?$/, `${system} ${r.phase}: refused only as RATE_LIMITED (${r.refusedByCode ?? 'none'})`);
      }
    }
    const chat = rows.filter((r) => r.system === 'chat');
    for (const r of chat) {
      t.ok(typeof r.cassandraCpuCores === 'number' && typeof r.cassandraCpuUsPerPersisted === 'number', `chat ${r.phase}: Cassandra CPU, per persisted message`);
      t.ok(typeof r.redisCpuCores === 'number', `chat ${r.phase}: Redis CPU apart`);
      t.ok(Number(r.cassandraRequestsPerMessage) >= 1, `chat ${r.phase}: at least one Cassandra request per message (${r.cassandraRequestsPerMessage})`);
      t.ok(Number(r.cassandraMutationsPerMessage) >= 1, `chat ${r.phase}: mutations per message (${r.cassandraMutationsPerMessage})`);
      t.ok(typeof r.cassandraReadsPerMessage === 'number' && typeof r.cassandraPaxosWritesPerMessage === 'number', `chat ${r.phase}: reads and Paxos writes per message`);
      t.match(r.cassandraWritesPerMessageByTable, /\w+ [\d.]+/, `chat ${r.phase}: writes per table of the run's keyspace (${r.cassandraWritesPerMessageByTable})`);
      t.ok(Number(r.ackMeanMs) > 0 && Number(r.storeWriteMeanMs) > 0 && Number(r.writesPerBatch) >= 1, `chat ${r.phase}: ack wait ${r.ackMeanMs} ms, store write ${r.storeWriteMeanMs} ms, ${r.writesPerBatch} writes a batch`);
      t.ok(typeof r.gcMsPerNodeSecond === 'number', `chat ${r.phase}: GC time of the three nodes`);
      t.ok(Number(r.eventLoopBusyPct) > 0 && r.storePagesPerMessage === null, `chat ${r.phase}: event loop ${r.eventLoopBusyPct}% busy; no LMDB on Cassandra`);
    }
    for (const r of rows.filter((x) => x.system !== 'chat')) {
      t.equal(r.cassandraCpuCores, undefined, `${r.system}: no Cassandra figures for a peer`);
      t.ok(typeof r.redisCpuCores === 'number', `${r.system}: Redis CPU`);
    }
    t.match(summary.goal, {
      maxRate: { want: /≥ 2500/, got: 20, met: false },
      cassandraCpuUsPerPersisted: { want: '≤ 200' },
      nodeCpuUsPerMessage: { want: '≤ 500' },
      stretchVsUws: { want: 0.5 },
      overload: { offeredPerSecond: 40, deliveredPctOfMax: { want: '≥ 80' }, unanswered: { want: 0, got: 0, met: true }, refusalP99Ms: { want: '< 500' } },
    });
    const report = run.file('RESULTS.md')!;
    for (const heading of ['Cassandra CPU µs / persisted msg', 'node CPU µs / msg', 'Redis cores', 'requests/msg', 'mutations/msg', 'reads/msg', 'paxos writes/msg', 'node-wide', '### Overload', 'refusal p99 ms', 'unanswered', "### Where a send's time goes", 'store write mean ms']) t.match(report, heading, `RESULTS.md shows ${heading}`);
  });
}
