import cassandra from 'cassandra-driver';
import { processStats } from '../lib/process-stats.ts';
import { listenerPid } from '../lib/services.ts';

/**
 * What one write costs Cassandra itself on this machine, with no chat service in the way: single-row
 * inserts at fixed rates, LOCAL_QUORUM, on the single node (replication factor 1) and on the ring
 * (replication factor 3), alternating in one run. Prints, per target and rate, the writes made, the
 * JVMs' cores (on the ring the three summed), their CPU µs per write beyond what they spent idle
 * just before, and the latency p50/p99. The floor under the cluster bench's Cassandra CPU per
 * message: a group commit writes many messages in one mutation, but every mutation costs this.
 *
 *   node --import tsx bench/micro/cassandra-writes.ts [--rates 250,500,1000] [--seconds 10] [--groups 1,4] [--spread 0,16 [--shared]] [--targets single,ring]
 *
 * `--groups`: rows per request. A group of G rows goes as one unlogged batch of G partitions (as
 * several chats' writes of a node would, sent together), so the rate of requests is the rate of
 * rows ÷ G: what a request costs beyond its rows shows as the drop in CPU per row.
 *
 * `--spread`: partitions a request's rows fall in (0, the default: each row its own). A request's
 * rows of one partition are one mutation: what a mutation costs beyond its rows shows as the drop
 * in CPU per row from a spread of G to a smaller one (the search index's layouts, search.ts).
 * With `--shared`, every request writes the same `spread` partitions (hot ones, as an
 * application's postings of an hour are), else each request partitions of its own.
 *
 * The single node is found at CASSANDRA_CONTACT_POINTS (default 127.0.0.1:9042), the ring at
 * HA_CASSANDRA_CONTACT_POINTS (default scripts/services.sh's 127.0.0.11-13:9042); each gets a
 * keyspace `bench_writes` (kept; one small table).
 */
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const rates = arg('rates', '250,500,1000').split(',').map(Number);
const seconds = Number(arg('seconds', '10'));
const groups = arg('groups', '1').split(',').map(Number);
const spreads = arg('spread', '0').split(',').map(Number);
const shared = process.argv.includes('--shared');
const wanted = arg('targets', 'single,ring').split(',');
const targets = [
  { name: 'single (RF 1)', points: process.env.CASSANDRA_CONTACT_POINTS ?? '127.0.0.1:9042', rf: 1 },
  { name: 'ring (RF 3)', points: process.env.HA_CASSANDRA_CONTACT_POINTS ?? '127.0.0.11:9042,127.0.0.12:9042,127.0.0.13:9042', rf: 3 },
].filter((t) => wanted.includes(t.name.split(' ')[0]!));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function open(points: string, rf: number) {
  const list = points.split(',').map((p) => p.trim().split(':'));
  const pids = list.map(([host, port]) => listenerPid(host!, Number(port ?? 9042)));
  if (pids.some((p) => p === undefined)) throw new Error(`no Cassandra listens at each of ${points}`);
  const client = new cassandra.Client({ contactPoints: list.map(([host]) => host!), protocolOptions: { port: Number(list[0]![1] ?? 9042) }, localDataCenter: 'datacenter1', queryOptions: { consistency: cassandra.types.consistencies.localQuorum, prepare: true } });
  await client.connect();
  await client.execute(`CREATE KEYSPACE IF NOT EXISTS bench_writes WITH replication = {'class': 'SimpleStrategy', 'replication_factor': ${rf}}`);
  await client.execute('CREATE TABLE IF NOT EXISTS bench_writes.rows (k text, c bigint, v text, PRIMARY KEY (k, c))');
  return { client, pids: pids as number[] };
}

async function run(client: cassandra.Client, pids: number[], rate: number, group: number, spread: number) {
  const cpu = async () => (await processStats(pids)).cpuSeconds;
  const idleFrom = await cpu();
  await sleep(3000);
  const idleCores = ((await cpu()) - idleFrom) / 3;
  const latencies: number[] = [];
  let sent = 0;
  let failed = 0;
  const inFlight = new Set<Promise<unknown>>();
  const payload = 'x'.repeat(200);
  let requests = 0;
  const from = await cpu();
  const started = performance.now();
  while (performance.now() - started < seconds * 1000) {
    const due = Math.floor((((performance.now() - started) / 1000) * rate) / group) - sent / group;
    for (let i = 0; i < due; i++) {
      requests++;
      const rows = Array.from({ length: group }, (_, j) => {
        sent++;
        // Each row its own partition (of 1,024 taken in turn), or `spread` partitions of this request's own.
        const k = spread === 0 ? `k${sent % 1024}` : shared ? `s${j % spread}` : `r${requests % 64}-${j % spread}`;
        return { query: 'INSERT INTO bench_writes.rows (k, c, v) VALUES (?, ?, ?)', params: [k, Date.now() * 1000 + (sent % 1000), payload] };
      });
      const at = performance.now();
      const request = group === 1 ? client.execute(rows[0]!.query, rows[0]!.params) : client.batch(rows, { logged: false, prepare: true });
      const write = request.then(
        () => void latencies.push(performance.now() - at),
        () => void failed++,
      );
      inFlight.add(write);
      void write.finally(() => inFlight.delete(write));
    }
    await sleep(5);
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  const used = (await cpu()) - from;
  latencies.sort((a, b) => a - b);
  const q = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]! * 10) / 10;
  return { rate, group, spread, writes: sent, failed, cores: Math.round((used / elapsed) * 100) / 100, idleCores: Math.round(idleCores * 100) / 100, cpuUsPerWrite: Math.round(((used - idleCores * elapsed) / sent) * 1e6), p50Ms: q(0.5), p99Ms: q(0.99) };
}

const opened = await Promise.all(targets.map(async (target) => ({ ...target, ...(await open(target.points, target.rf)) })));
const rows: string[] = ['| target | offered writes/s | rows per request | partitions per request | written | failed | Cassandra cores | idle cores before | CPU µs / write beyond idle | p50 ms | p99 ms |', '|---|---|---|---|---|---|---|---|---|---|---|'];
for (const rate of rates) {
  for (const group of groups) for (const spread of spreads) for (const t of opened) {
    const r = await run(t.client, t.pids, rate, group, spread);
    console.log(JSON.stringify({ target: t.name, ...r }));
    rows.push(`| ${t.name} | ${r.rate} | ${r.group} | ${r.spread === 0 ? r.group : r.spread} | ${r.writes} | ${r.failed} | ${r.cores} | ${r.idleCores} | ${r.cpuUsPerWrite} | ${r.p50Ms} | ${r.p99Ms} |`);
  }
}
console.log(rows.join('\n'));
await Promise.all(opened.map((t) => t.client.shutdown()));
