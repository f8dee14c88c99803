import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { LoadPool } from './load/pool.ts';
import { SYSTEMS, type SystemName } from './load/systems.ts';
import { stopAll, whileRunning } from './lib/cleanup.ts';
import { runMeta } from './lib/meta.ts';
import { writeResult, type ScenarioResult } from './lib/output.ts';
import { Progress } from './lib/progress.ts';
import { writeReport } from './lib/report.ts';
import type { Context } from './scenarios/context.ts';
import { SCENARIOS, type ScenarioName } from './scenarios/index.ts';

const HELP = `Usage: npm run bench -- <scenario> [options]

Measures this service and, in the same run with the same load generator, its peers: bare
uWebSockets.js pub/sub (uws: no auth, no storage, the ceiling) and Socket.IO 4 (socketio).
Writes <scenario>.json and <scenario>.csv to --out, then renders RESULTS.md and SVG charts from
every result there. Each run stops by itself within --max-minutes.

Scenarios:
  connections  N idle authenticated WebSocket connections: connect rate, server RSS and live heap per connection (each read after a full collection)
  fanout       rooms x members online, open-loop sends: delivered msgs/s, latency p50/p99/p99.9,
               server CPU per delivery and per message; sweeps for the highest rate whose p99
               stays under --p99, runs at 70% of it, then an overload run at twice it
  sends        persisted, acknowledged sends per second over WebSocket and over HTTP
               (--push web-push: the push scenario; --attachments 1: the attachments one)
  history      getMessages latency and throughput at several history depths (this service only)
  chatlist     GET /api/chats for a user at the chat cap against a user with one chat, on the
               embedded store and on Cassandra with 3 nodes (this service only)
  flood        a quiet tenant's send latency alone and while another tenant's sockets send
               every action at the default limits (this service only)
  cluster      fanout across 3 nodes: this service on Cassandra and Redis (started with
               scripts/services.sh unless running), Socket.IO with its Redis adapter, uws over Redis;
               each system first gets 15 s of unrecorded load to warm up (this service
               90 s at 1,000 msgs/s: Cassandra's JVM warms slowly); Redis and Cassandra
               CPU per step, Cassandra CPU and statements per persisted message.
               With --topology ha: this service alone, on the single topology and then on the
               replicated one (scripts/services.sh --topology ha), in one run: the highest rate of
               each, ha ÷ single (goal ≥ 0.5), Cassandra CPU per message (ha: the three nodes')
  webhooks     persisted sends over WebSocket with no webhook endpoint and with one subscribed to
               every event (a loopback receiver), alternating in one run: sends/s and p99 as
               ratios (this service only)
  push         persisted sends over WebSocket, every chat with one member offline, with no push
               and with Web Push (a loopback push service), alternating in one run: sends/s as a
               ratio (goal >= 0.8) and how long after the run the last push arrived (goal <= 2 s);
               also 'sends --push web-push' (this service only)
  blocklist    persisted sends over WebSocket with no blocklist and with one of 10,000 entries,
               alternating in one run: sends/s and p99 as ratios (this service only)
  attachments  uploads of 1 MB files (ask, PUT, finalize: uploads/s and MB/s), then persisted
               sends over HTTP with no attachment and with one finalized attachment each,
               alternating in one run: CPU per send as a ratio (this service only)
  threads      GET /api/users/me/threads (the threads inbox) for a user following 500 threads
               against a user following one, on the embedded store and on Cassandra with 3
               nodes: p50 and p99 (goal: p99 < 20 ms) (this service only)
  search       first the sends workload over WebSocket with the search index and without it
               (SEARCH_INDEX=off): CPU per send as a ratio (goal <= 1.3); then 1,000,000
               messages over 1,000 chats and a user in 100 of them searching a rare word, a
               common word and two words (the last as a prefix), on the embedded store and on
               Cassandra with 3 nodes: p50 and p99 (goal p99 < 50 ms embedded, < 100 ms on
               Cassandra), and the embedded index's bytes per message (this service only)
  all          connections, fanout, sends, history, chatlist, flood, cluster, webhooks,
               blocklist, attachments, threads and search, in that order
  report       only render RESULTS.md and the charts from the results in --out

Common options:
  --systems LIST       systems to measure, of chat,uws,socketio (default: all)
  --workers N          load generator processes (default 2)
  --seconds S          measured seconds per run (default 5)
  --warmup S           seconds before measuring each run (default 1)
  --out DIR            where results go (default bench/results; RESULTS.md goes next to it)
  --max-minutes M      stop, cleaning up, after M minutes (default 40)
  --smoke              tiny sizes that finish in seconds (what CI runs)
  --no-progress        no progress bar
  --profile DIR        write a CPU profile of this service's processes to DIR (node --cpu-prof);
                       summarise one with: node --import tsx bench/lib/profile-summary.ts FILE
  --help               this text

connections:
  --connections N      connections per system (default 100000)
  --addresses A        loopback source addresses 127.0.0.1.. (default: one per 25000 connections)
fanout, cluster:
  --rooms C            rooms (group chats) (default 20; cluster 12)
  --members M          members online per room, the sender included (default 50; cluster 24)
  --rate R             one run at R msgs/s in total instead of the sweep
  --start-rate R       the sweep's first rate (default 200)
  --p99 MS             latency limit of the sweep (default 50; cluster 250: acks wait for Cassandra)
  --max-steps N        runs per system in the sweep at most (default 14)
  --no-overload        skip the overload phase: after the sweep (and the run at 70%), one run
                       offered at twice the highest rate that passed, reporting what was still
                       delivered, the sends refused with an error (by code) and how fast, and
                       the sends never answered
cluster:
  --topology T         single (default): one Cassandra and one Redis, as CASSANDRA_CONTACT_POINTS
                       and REDIS_URL name them or scripts/services.sh starts them; the peers too.
                       ha: this service only (--systems chat), first on the single topology, then
                       on the replicated one: the three-node Cassandra ring at replication factor 3
                       and the six-node Redis Cluster (at HA_CASSANDRA_CONTACT_POINTS and
                       HA_REDIS_CLUSTER_NODES when set, else scripts/services.sh env --topology ha;
                       started with scripts/services.sh start --topology ha when not running;
                       REDIS_CLUSTER_NODES for the nodes), with the same sweep; reports both
                       highest rates and ha ÷ single (goal ≥ 0.5), and Cassandra's CPU and
                       statements per message summed over the ring's three nodes. Its keyspace
                       (chat_bench_ha) is kept between runs: the first run creates it, about 3
                       minutes on two cores. Results go to cluster-ha.json/.csv
sends:
  --senders S          sending users, each in a chat of its own (default 64)
  --window W           WebSocket sends in flight per sender (default 16)
  --transports LIST    of ws,http (default: both)
  --concurrency N      HTTP requests in flight in total (default 64)
  --push web-push      run the push scenario instead (below)
  --attachments 1      run the attachments scenario instead (below): sends without and with
                       one finalized attachment each
push:
  --senders S, --window W   as for sends (defaults 64 and 16; as many offline recipients)
  --rounds N           pairs of runs, no push then Web Push (default 4)
webhooks:
  --senders S, --window W   as for sends (defaults 64 and 16)
  --rounds N           pairs of runs, no endpoint then one endpoint (default 6)
blocklist:
  --senders S, --window W   as for sends (defaults 64 and 16)
  --rounds N           pairs of runs, no blocklist then the list (default 6)
  --entries N          entries of the list (default 10000)
attachments:
  --senders S          sending users, each in a chat of its own, one HTTP send in flight each
                       (default 64)
  --sends N            sends per sender per run (default 60)
  --rounds N           pairs of runs, no attachment then one attachment each (default 3)
  --uploads N          1 MB uploads (default 200), --uploaders U in flight (default 8),
                       --file-mb M their size (default 1)
history:
  --depths LIST        history depths (default 1000,100000,1000000)
  --page N             messages per page (default 50)
  --concurrency N      requests in flight (default 16)
chatlist:
  --chats N            chats of the full user (default 1000, USER_CHATS_MAX's default; another
                       value runs the service with USER_CHATS_MAX=N)
  --sizes LIST         page sizes (default 1,20)
  --stores LIST        of embedded,cassandra (default: both; --smoke: embedded)
  --concurrency N      requests in flight (default 16)
search:
  --messages N         messages sent before searching (default 1000000)
  --chats N            chats they are spread over (default 1000)
  --member-of N        of those, chats the searching user is in (default 100)
  --senders S          senders of the send-cost part, each in a chat of its own (default 64)
  --rate R             sends/s they offer in all to one node, at a fixed rate (default 6000)
  --cluster-rate R     the same to three nodes on Cassandra (default 600)
  --send-cost LIST     where the send cost is measured: of embedded,cassandra (default: both;
                       --smoke: embedded); none: skipped
  --stores LIST        where searches are measured: of embedded,cassandra (default: both;
                       --smoke: embedded); none: the send cost alone
  --concurrency N      searches in flight (default 4)
threads:
  --threads N          threads the busy user follows (default 500)
  --size N             inbox page size (default 20)
  --stores LIST        of embedded,cassandra (default: both; --smoke: embedded)
  --concurrency N      requests in flight (default 4)
flood:
  --sockets N          sockets of the flooding tenant, one per user (default 1000)
  --rate R             the quiet tenant's msgs/s in all (default 100)
  --rooms C, --members M   the quiet tenant's groups and their members (default 4 and 5)
  --app-actions N      the service's APP_ACTIONS_PER_SECOND (default 1000, its default)
  --modes LIST         the floods to run, one after the other (default obey,ignore): obey = the
                       flooding sockets wait as told by retry hints; ignore = they send on regardless,
                       reconnect at once when closed and retry refused upgrades every second
`;

const OPTIONS = {
  systems: { type: 'string' },
  workers: { type: 'string' },
  seconds: { type: 'string' },
  warmup: { type: 'string' },
  out: { type: 'string' },
  'max-minutes': { type: 'string' },
  smoke: { type: 'boolean' },
  'no-progress': { type: 'boolean' },
  'no-overload': { type: 'boolean' },
  help: { type: 'boolean' },
  connections: { type: 'string' },
  addresses: { type: 'string' },
  rooms: { type: 'string' },
  members: { type: 'string' },
  rate: { type: 'string' },
  'start-rate': { type: 'string' },
  p99: { type: 'string' },
  'max-steps': { type: 'string' },
  senders: { type: 'string' },
  window: { type: 'string' },
  transports: { type: 'string' },
  push: { type: 'string' },
  attachments: { type: 'string' },
  concurrency: { type: 'string' },
  depths: { type: 'string' },
  profile: { type: 'string' },
  page: { type: 'string' },
  chats: { type: 'string' },
  sizes: { type: 'string' },
  stores: { type: 'string' },
  sockets: { type: 'string' },
  'app-actions': { type: 'string' },
  modes: { type: 'string' },
  rounds: { type: 'string' },
  entries: { type: 'string' },
  topology: { type: 'string' },
  sends: { type: 'string' },
  uploads: { type: 'string' },
  uploaders: { type: 'string' },
  'file-mb': { type: 'string' },
  threads: { type: 'string' },
  size: { type: 'string' },
  messages: { type: 'string' },
  'member-of': { type: 'string' },
  'cluster-rate': { type: 'string' },
  'send-cost': { type: 'string' },
} as const;

/** Node's parser refuses a value that starts with a dash (`--rooms -3`), so a value option is
 * joined to a negative number after it: the number is then refused like any other, by name. */
function joinValues(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = args[i]!.startsWith('--') ? args[i]!.slice(2) : '';
    const option = (OPTIONS as Record<string, { type: string }>)[name];
    if (option?.type === 'string' && /^-[\d.]/.test(args[i + 1] ?? '')) out.push(`${args[i]}=${args[++i]}`);
    else out.push(args[i]!);
  }
  return out;
}

function parse() {
  try {
    return parseArgs({ args: joinValues(process.argv.slice(2)), allowPositionals: true, options: OPTIONS });
  } catch (error) {
    // Unknown options and missing values: the parser's own sentence, and the usual exit code.
    fail((error as Error).message);
  }
}
const { values, positionals } = parse();

function fail(message: string): never {
  process.stderr.write(`${message}\nSee: npm run bench -- --help\n`);
  process.exit(2);
}

if (values.help || positionals.length === 0) {
  process.stdout.write(HELP);
  process.exit(values.help ? 0 : 2);
}
const [scenario] = positionals;
const names = [...Object.keys(SCENARIOS), 'all', 'report'];
if (!scenario || !names.includes(scenario) || positionals.length > 1) fail(`unknown scenario ${positionals.join(' ')}: one of ${names.join(', ')}`);

/** A positive number option, or its default. */
export function num(name: keyof typeof values, fallback: number, integer = true): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) fail(`--${name} must be a positive ${integer ? 'integer' : 'number'}, not ${String(raw)}`);
  return n;
}
export const list = (name: keyof typeof values): string[] | undefined => (typeof values[name] === 'string' ? String(values[name]).split(',').map((s) => s.trim()).filter(Boolean) : undefined);

const topology = values.topology ?? 'single';
if (topology !== 'single' && topology !== 'ha') fail(`--topology must be single or ha, not ${topology}`);
if (values.topology !== undefined && scenario !== 'cluster' && scenario !== 'all') fail('--topology applies to the cluster scenario only');
const systems = (list('systems') ?? SYSTEMS) as SystemName[];
for (const s of systems) if (!SYSTEMS.includes(s)) fail(`unknown system ${s}: of ${SYSTEMS.join(', ')}`);
if (topology === 'ha' && list('systems')?.some((s) => s !== 'chat')) fail('--topology ha measures this service only: --systems chat (the peers run on the single topology, in `cluster` without it)');
const out = values.out ?? new URL('./results', import.meta.url).pathname;
const reportPath = values.out ? join(out, 'RESULTS.md') : new URL('./RESULTS.md', import.meta.url).pathname;
const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`;

if (scenario === 'report') {
  const written = await writeReport(out, reportPath);
  process.stdout.write(`${written.join('\n')}\n`);
  process.exit(0);
}

const maxMinutes = num('max-minutes', 40, false);
const bound = setTimeout(() => {
  process.stderr.write(`\nbench: stopped after ${maxMinutes} minutes (--max-minutes)\n`);
  void stopAll().then(() => process.exit(3));
}, maxMinutes * 60_000);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAll().then(() => process.exit(130)));

const pool = await LoadPool.start(num('workers', 2));
const untrack = whileRunning(() => pool.stop());
const progress = new Progress(!values['no-progress']);
const ctx: Context = {
  pool,
  progress,
  systems,
  profileDir: values.profile,
  log: (line) => process.stderr.write(`${process.stderr.isTTY ? '\r\x1b[K' : ''}${line}\n`),
};
// The code measured is the code as the run started (the service was built then): edits made while
// a long run goes on do not make its results say "with uncommitted changes", nor hide them.
const startedAt = runMeta();
const order = scenario === 'all' ? (Object.keys(SCENARIOS) as ScenarioName[]) : [scenario as ScenarioName];
const failed: string[] = [];
try {
  for (const name of order) {
    // One scenario failing leaves the others to run (`all`); the exit status says it failed.
    try {
      const run = SCENARIOS[name];
      const output = await run(ctx, { num, list, smoke: values.smoke === true, overload: values['no-overload'] !== true, seconds: num('seconds', values.smoke ? 1 : 5, false), warmup: num('warmup', values.smoke ? 0.5 : 1, false), topology });
      const { parameters, rows, summary, notes } = output;
      // `cluster --topology ha` writes cluster-ha.*, beside the single topology's cluster.*.
      const written = output.scenario ?? name;
      const result: ScenarioResult = { scenario: written, meta: { ...runMeta(), commit: startedAt.commit, dirty: startedAt.dirty }, command, parameters, rows, summary, notes };
      const files = writeResult(out, result);
      ctx.log(`${written}: wrote ${files.join(', ')}`);
      process.stdout.write(`${JSON.stringify({ scenario: written, summary })}\n`);
    } catch (error) {
      failed.push(name);
      ctx.log(`${name} failed: ${(error as Error).stack ?? String(error)}`);
      // The scenario's own cleanup stopped its servers; the generator stays for the next one.
      await ctx.pool.closeAll().catch(() => undefined);
    }
  }
  const written = await writeReport(out, reportPath);
  ctx.log(`report: ${written.join(', ')}`);
} finally {
  progress.stop();
  untrack();
  pool.stop();
  await stopAll();
  clearTimeout(bound);
}
if (failed.length > 0) process.stderr.write(`bench: failed: ${failed.join(', ')}\n`);
process.exit(failed.length > 0 ? 1 : 0);
