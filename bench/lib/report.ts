import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { barChart, lineChart } from './charts.ts';
import type { Row, ScenarioResult } from './output.ts';

const ORDER = ['connections', 'fanout', 'sends', 'history', 'chatlist', 'flood', 'cluster', 'cluster-ha', 'webhooks', 'push', 'blocklist', 'attachments', 'threads', 'search'];
const PEERS = ['uws', 'socketio'];

const fmt = (v: unknown): string => {
  if (v === null || v === undefined || v === '') return '–';
  if (typeof v === 'number') return Number.isInteger(v) ? v.toLocaleString('en-US') : String(v);
  return String(v);
};

function table(rows: Row[], columns: [string, string][]): string {
  const head = `| ${columns.map(([, title]) => title).join(' | ')} |\n|${columns.map(() => '---').join('|')}|`;
  return `${head}\n${rows.map((r) => `| ${columns.map(([key]) => fmt(r[key])).join(' | ')} |`).join('\n')}\n`;
}

/** Adds `vs <peer>` columns: this service's `field` over the peer's in the row with the same `key`. */
function withRatios(rows: Row[], field: string, key: (r: Row) => string = () => ''): Row[] {
  return rows.map((r) => {
    const out: Row = { ...r };
    for (const peer of PEERS) {
      const theirs = rows.find((x) => x.system === peer && key(x) === key(r));
      const ours = rows.find((x) => x.system === 'chat' && key(x) === key(r));
      out[`vs ${peer}`] = r.system === 'chat' && theirs && ours && typeof ours[field] === 'number' && Number(theirs[field]) > 0 ?  `${(Number(ours[field]) / Number(theirs[field])).toFixed(2)}×` : null;
    }
    return out;
  });
}

const ratioColumns = (rows: Row[]): [string, string][] => PEERS.filter((p) => rows.some((r) => r.system === p)).map((p) => [`vs ${p}`, `chat ÷ ${p}`]);

/** The summary's goal, or the goals of its parts (`flood`: one per kind of flood). */
function goals(summary: Record<string, unknown>): string {
  const goal = summary.goal as Record<string, unknown> | undefined;
  if (goal) return `\nGoal check: \`${JSON.stringify(goal)}\`\n`;
  const parts = Object.entries(summary).filter(([, v]) => v && typeof v === 'object' && 'goal' in v);
  return parts.map(([name, v]) => `\nGoal check (${name}): \`${JSON.stringify((v as { goal: unknown }).goal)}\`\n`).join('');
}

type Section = (r: ScenarioResult, chart: (name: string, svg: Promise<string>) => Promise<string>) => Promise<string>;

type Column = [string, string];

/** Columns shown only when some row has the field (Redis and Cassandra exist only in `cluster`). */
const present = (rows: Row[], columns: Column[]): Column[] => columns.filter(([key]) => rows.some((r) => r[key] !== undefined));

const CASSANDRA_NOTE =
  "Cassandra's counters (`system_views.thread_pools`, `local_write_latency`) are node-wide: each figure is everything Cassandra did during the step (warmup, window and drain: this service's statements, its own bookkeeping, compaction, anything else) divided by the sends acknowledged in it.\n";

const SEND_TIME_NOTE =
  "From the nodes' own `/metrics`, summed over them, for the step (warmup, window and drain): ack wait is from a write entering its chat's actor to it being durable (the wait for a batch to start, its write, and the batches queued before it), and its p99 the upper bound of the histogram bucket holding it; a store write is one batch; GC is the time the nodes' event loops stood still for garbage collection, per node and second of warmup and window, and the collections that took over 10 ms; event loop busy is each node's busy time over the step as a share of its warmup and window (the drain adds a little) (JavaScript and the system calls made from it, such as each socket write); LMDB commits are the embedded store's write transactions per node and second, counted as GC is (each synced to disk before its writes resolve) and its pages the 4 KiB pages they wrote, per acknowledged message (– where the nodes do not store in LMDB); refused counts the sends refused with RATE_LIMITED by a node's load shedder (its event loop late, or most sends of a window slower than 100 ms while the queue moves) and the writes refused by a chat's queue (too long, or its oldest write waiting over 100 ms with 32 or more waiting). A user's own send rate is not in them.\n";

const STATEMENT_COLUMNS: Column[] = [['phase', 'phase'], ['offeredPerSecond', 'offered/s'], ['ackedPerSecond', 'acked/s'], ['cassandraRequestsPerMessage', 'requests/msg'], ['cassandraMutationsPerMessage', 'mutations/msg'], ['cassandraReadsPerMessage', 'reads/msg'], ['cassandraPaxosWritesPerMessage', 'paxos writes/msg'], ['cassandraKeyspaceWritesPerMessage', 'keyspace writes/msg'], ['cassandraWritesPerMessageByTable', 'writes/msg by table'], ['cassandraCpuUsPerPersisted', 'Cassandra CPU µs / msg']];
/** The send-time columns; the event loop's and LMDB's only where some row has them (older results, Cassandra). */
const sendTimeColumns = (rows: Row[]): Column[] => [
  ['phase', 'phase'],
  ['offeredPerSecond', 'offered/s'],
  ['p50Ms', 'delivered p50 ms'],
  ['p99Ms', 'delivered p99 ms'],
  ['ackMeanMs', 'ack wait mean ms'],
  ['ackP99UpToMs', 'ack wait p99 ≤ ms'],
  ['storeWriteMeanMs', 'store write mean ms'],
  ['writesPerBatch', 'writes per batch'],
  ['gcMsPerNodeSecond', 'GC ms per node-second'],
  ['gcPausesOver10Ms', 'GC pauses over 10 ms'],
  ...(
    [
      ['eventLoopBusyPct', 'event loop busy %'],
      ['storeCommitsPerSecond', 'LMDB commits/s'],
      ['storePagesPerMessage', 'LMDB pages per message'],
    ] as Column[]
  ).filter(([key]) => rows.some((r) => r[key] !== undefined && r[key] !== null)),
  ['refusedNodeOverloaded', 'refused: node overloaded'],
  ['refusedChatBusy', 'refused: chat busy'],
];
const OVERLOAD_COLUMNS: Column[] = [['offeredPerSecond', 'offered/s'], ['sentPerSecond', 'sent/s'], ['deliveredMsgsPerSecond', 'delivered msgs/s'], ['pctOfMax', '% of highest rate'], ['p50Ms', 'p50 ms'], ['p99Ms', 'p99 ms'], ['deliveredPct', 'accepted sends delivered %'], ['refused', 'refused'], ['refusedByCode', 'refused by code'], ['refusalP99Ms', 'refusal p99 ms'], ['unanswered', 'unanswered']];
/** Every run's columns after its system (and phase); the cluster's add Redis and Cassandra. */
const everyRunColumns = (rows: Row[], cluster: boolean): Column[] => [
  ['offeredPerSecond', 'offered/s'],
  ['deliveredPerSecond', 'delivered/s'],
  ['deliveredPct', 'delivered %'],
  ['p50Ms', 'p50 ms'],
  ['p99Ms', 'p99 ms'],
  ['p999Ms', 'p99.9 ms'],
  ['serverCpuUsPerDelivery', 'server µs/delivery'],
  ['nodeCpuUsPerMessage', 'node µs/msg'],
  ['serverCpuCores', 'server cores'],
  ...present(rows, [['serverKernelPct', 'server CPU in the kernel %']]),
  ['generatorCpuCores', 'generator cores'],
  ...present(rows, [['generatorLagP99Ms', 'generator send lag p99 ms']]),
  // Older results summed Redis and Cassandra in one column.
  ...present(rows, [['servicesCpuCores', 'Redis + Cassandra cores']]),
  ...(cluster ? ([['redisCpuCores', 'Redis cores'], ['cassandraCpuCores', 'Cassandra cores'], ['cassandraCpuUsPerPersisted', 'Cassandra µs/msg']] as Column[]) : []),
  ['refused', 'refused'],
  ['unanswered', 'unanswered'],
  ['ok', 'p99 < limit, none lost or refused'],
];

const fanoutSection: Section = async (r, chart) => {
  const summary = r.summary as Record<string, { maxRate: number; maxDeliveredPerSecond: number; capped?: boolean; at70?: Row; overload?: Row } | undefined>;
  const cluster = r.scenario === 'cluster';
  const systems = ['chat', ...PEERS].filter((s) => summary[s]);
  const best: Row[] = systems.map((s) => {
    const at = r.rows.find((x) => x.system === s && x.offeredPerSecond === summary[s]!.maxRate && x.ok === true);
    return {
      system: s,
      maxRate: `${summary[s]!.capped ? '≥ ' : ''}${summary[s]!.maxRate.toLocaleString('en-US')}`,
      delivered: summary[s]!.maxDeliveredPerSecond,
      p99At70: summary[s]!.at70?.p99Ms ?? null,
      p999At70: summary[s]!.at70?.p999Ms ?? null,
      cpu: at?.serverCpuUsPerDelivery ?? null,
      nodeCpu: at?.nodeCpuUsPerMessage ?? null,
      cassandraCpu: at?.cassandraCpuUsPerPersisted ?? null,
      cassandraCores: at?.cassandraCpuCores ?? null,
      redisCores: at?.redisCpuCores ?? null,
      gen: summary[s]!.at70?.generatorCpuCores ?? null,
    };
  });
  // Against a peer whose sweep never failed, its figure is a lower bound and the ratio an upper one.
  const rated = withRatios(best, 'delivered').map((row) => {
    const out: Row = { ...row };
    for (const peer of PEERS) if (out[`vs ${peer}`] && summary[peer]?.capped) out[`vs ${peer}`] = `≤ ${out[`vs ${peer}`]}`;
    return out;
  });
  const sweep = r.rows.filter((x) => x.phase === 'sweep' || x.phase === 'fixed');
  const services: Column[] = cluster
    ? [['cassandraCpu', 'Cassandra CPU µs / persisted msg'], ['cassandraCores', 'Cassandra cores'], ['redisCores', 'Redis cores']]
    : [];
  const statements = r.rows.filter((x) => x.system === 'chat' && x.cassandraRequestsPerMessage !== undefined);
  const overload = r.rows.filter((x) => typeof x.phase === 'string' && x.phase.startsWith('overload'));
  const sendTimes = r.rows.filter((x) => x.system === 'chat' && x.ackMeanMs !== undefined);
  return [
    table(rated, [['system', 'system'], ['maxRate', 'highest rate with p99 < limit (msgs/s)'], ['delivered', 'deliveries/s there'], ...ratioColumns(best), ['p99At70', 'p99 at 70% (ms)'], ['p999At70', 'p99.9 at 70% (ms)'], ['cpu', 'server CPU µs / delivery'], ['nodeCpu', 'node CPU µs / msg'], ...services, ['gen', 'generator cores at 70%']]),
    `CPU per message and the cores are those of the run at the highest rate. Node CPU µs / msg: the ${cluster ? 'three nodes\'' : 'server\'s'} CPU over the run divided by the sends acknowledged in it${cluster ? '; Cassandra CPU µs / persisted msg: Cassandra\'s CPU over the run divided by the same sends (this service acknowledges a send once Cassandra has it)' : ''}.\n`,
    await chart(`${r.scenario}-latency`, lineChart(sweep, { title: `${r.scenario}: p99 latency against offered rate`, x: 'offeredPerSecond', xTitle: 'offered messages/s', y: 'p99Ms', yTitle: 'p99 latency (ms, log)', logX: true, logY: true })),
    await chart(`${r.scenario}-throughput`, barChart(best, { title: `${r.scenario}: deliveries/s at the highest rate`, y: 'delivered', yTitle: 'deliveries/s (messages × members)' })),
    best.some((b) => String(b.maxRate).startsWith('≥')) ? '≥: the sweep never failed within its steps (`--max-steps`), so the highest rate is at least this (and a ratio to it at most the one shown, ≤).\n' : '',
    statements.length > 0
      ? `### Cassandra statements per acknowledged message (this service)\n\n${table(statements, STATEMENT_COLUMNS)}\n${CASSANDRA_NOTE}`
      : '',
    sendTimes.length > 0
      ? `### Where a send's time goes on the nodes (this service)\n\n${table(sendTimes, sendTimeColumns(sendTimes))}\n${SEND_TIME_NOTE}`
      : '',
    overload.length > 0
      ? `### Overload: offered at twice the highest rate\n\n${table(overload, [['system', 'system'], ...OVERLOAD_COLUMNS])}`
      : '',
    `<details><summary>Every run</summary>\n\n${table(r.rows, [['system', 'system'], ['phase', 'phase'], ...everyRunColumns(r.rows, cluster)])}\n</details>\n`,
  ].join('\n');
};

/** A topology's figures in a cluster-ha result's summary (as SystemFanout). */
interface TopologySummary {
  maxRate: number;
  maxDeliveredPerSecond: number;
  capped?: boolean;
  at70?: Row;
}

/**
 * `cluster --topology ha`: this service on the single topology and on the replicated one, measured
 * in one run: the highest rate of each, ha ÷ single, what a message cost each, and every step by
 * topology.
 */
const clusterHaSection: Section = async (r, chart) => {
  const summary = r.summary as { single?: TopologySummary; ha?: TopologySummary; goal?: { got: unknown; want: string; met: boolean } };
  const topologies = (['single', 'ha'] as const).filter((t) => summary[t]);
  const best: Row[] = topologies.map((t) => {
    const s = summary[t]!;
    const at = r.rows.find((x) => x.topology === t && x.offeredPerSecond === s.maxRate && x.ok === true && (x.phase === 'sweep' || x.phase === 'fixed'));
    return {
      topology: t,
      maxRate: `${s.capped ? '≥ ' : ''}${s.maxRate.toLocaleString('en-US')}`,
      rate: s.maxRate,
      delivered: s.maxDeliveredPerSecond,
      vsSingle: t === 'ha' && summary.goal ? String(summary.goal.got ?? '–') : null,
      p99At70: s.at70?.p99Ms ?? null,
      p999At70: s.at70?.p999Ms ?? null,
      nodeCpu: at?.nodeCpuUsPerMessage ?? null,
      cassandraCpu: at?.cassandraCpuUsPerPersisted ?? null,
      cassandraCores: at?.cassandraCpuCores ?? null,
      redisCores: at?.redisCpuCores ?? null,
      gen: s.at70?.generatorCpuCores ?? null,
    };
  });
  const byTopology = (rows: Row[]) => topologies.flatMap((t) => rows.filter((x) => x.topology === t));
  const sweep = r.rows.filter((x) => x.phase === 'sweep' || x.phase === 'fixed');
  const statements = byTopology(r.rows.filter((x) => x.cassandraRequestsPerMessage !== undefined));
  const sendTimes = byTopology(r.rows.filter((x) => x.ackMeanMs !== undefined));
  const overload = byTopology(r.rows.filter((x) => typeof x.phase === 'string' && x.phase.startsWith('overload')));
  const goal = summary.goal;
  return [
    table(best, [['topology', 'topology'], ['maxRate', 'highest rate with p99 < limit (msgs/s)'], ['delivered', 'deliveries/s there'], ['vsSingle', 'ha ÷ single'], ['p99At70', 'p99 at 70% (ms)'], ['p999At70', 'p99.9 at 70% (ms)'], ['nodeCpu', 'node CPU µs / msg'], ['cassandraCpu', 'Cassandra CPU µs / persisted msg'], ['cassandraCores', 'Cassandra cores'], ['redisCores', 'Redis cores'], ['gen', 'generator cores at 70%']]),
    goal ? `ha ÷ single: ${fmt(goal.got)} (goal ${goal.want}: ${goal.met ? 'met' : 'not met'}).\n` : '',
    "CPU per message and the cores are those of the run at the highest rate. Node CPU µs / msg: the three nodes' CPU over the run divided by the sends acknowledged in it; Cassandra CPU µs / persisted msg: Cassandra's CPU over the run divided by the same sends, on the ring summed over its three JVMs (Redis cores: over the Redis Cluster's six processes).\n",
    await chart(`${r.scenario}-latency`, lineChart(sweep, { title: `${r.scenario}: p99 latency against offered rate, by topology`, x: 'offeredPerSecond', xTitle: 'offered messages/s', y: 'p99Ms', yTitle: 'p99 latency (ms, log)', logX: true, logY: true, series: 'topology' })),
    await chart(`${r.scenario}-throughput`, barChart(best, { title: `${r.scenario}: highest rate with p99 under the limit`, y: 'rate', yTitle: 'messages/s', x: 'topology' })),
    best.some((b) => String(b.maxRate).startsWith('≥')) ? '≥: the sweep never failed within its steps (`--max-steps`), so the highest rate is at least this.\n' : '',
    statements.length > 0
      ? `### Cassandra statements per acknowledged message\n\n${table(statements, [['topology', 'topology'], ...STATEMENT_COLUMNS])}\n${CASSANDRA_NOTE}On the ring the counters are summed over its three nodes: every write is applied on each replica, a request counted once by its coordinator.\n`
      : '',
    sendTimes.length > 0 ? `### Where a send's time goes on the nodes\n\n${table(sendTimes, [['topology', 'topology'], ...sendTimeColumns(sendTimes)])}\n${SEND_TIME_NOTE}` : '',
    overload.length > 0 ? `### Overload: offered at twice the highest rate\n\n${table(overload, [['topology', 'topology'], ...OVERLOAD_COLUMNS])}` : '',
    `<details><summary>Every run</summary>\n\n${table(r.rows, [['topology', 'topology'], ['phase', 'phase'], ...everyRunColumns(r.rows, true)])}\n</details>\n`,
  ].join('\n');
};

/**
 * The sends/s ratio of each round's pair (with the endpoint, or push, ÷ without), lowest to highest: how far
 * single rounds stray from the mean on this shared machine.
 */
function roundRange(rows: Row[], baseline = 'no endpoint'): string {
  const ratios: number[] = [];
  for (const one of rows.filter((x) => x.mode !== baseline)) {
    const none = rows.find((x) => x.round === one.round && x.mode === baseline);
    if (none && Number(none.ackedPerSecond) > 0) ratios.push(Number(one.ackedPerSecond) / Number(none.ackedPerSecond));
  }
  if (ratios.length < 2) return '';
  return `; round by round ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×`;
}

const SECTIONS: Record<string, Section> = {
  connections: async (r, chart) => {
    const rows = withRatios(r.rows, 'rssBytesPerConnection');
    return [
      table(rows, [['system', 'system'], ['connections', 'connections'], ['failed', 'failed'], ['connectsPerSecond', 'connects/s'], ['rssBytesPerConnection', 'server RSS bytes / connection'], ['rssSlopeBytes', 'RSS slope, second half (bytes / connection)'], ['rssBytesPerConnectionFromStart', 'RSS from start (bytes / connection)'], ['heapBytesPerConnection', 'live JS heap bytes / connection'], ...ratioColumns(r.rows)]),
      'Ratios are of server RSS per connection: lower is better. A system whose resident memory was still falling as the connections opened has no RSS figure (see the notes); its live heap per connection stands.\n',
      await chart('connections', barChart(r.rows, { title: 'Live JavaScript heap per idle connection (after a full collection)', y: 'heapBytesPerConnection', yTitle: 'bytes per connection' })),
    ].join('\n');
  },
  fanout: fanoutSection,
  cluster: fanoutSection,
  'cluster-ha': clusterHaSection,
  sends: async (r, chart) => {
    const rows = withRatios(r.rows, 'ackedPerSecond', (x) => String(x.transport));
    return [
      table(rows, [['system', 'system'], ['transport', 'over'], ['ackedPerSecond', 'acked sends/s'], ...ratioColumns(r.rows), ['p50Ms', 'p50 ms'], ['p99Ms', 'p99 ms'], ['serverCpuUsPerSend', 'server CPU µs / send'], ['generatorCpuCores', 'generator cores'], ['errors', 'errors']]),
      await chart('sends', barChart(r.rows, { title: 'Acknowledged sends per second', y: 'ackedPerSecond', yTitle: 'acked sends/s', group: 'transport' })),
    ].join('\n');
  },
  history: async (r, chart) =>
    [
      table(r.rows, [['depth', 'depth'], ['page', 'page'], ['requestsPerSecond', 'pages/s'], ['p50Ms', 'p50 ms'], ['p99Ms', 'p99 ms'], ['throughputVsSmallest', 'pages/s vs smallest depth'], ['p50VsSmallest', 'p50 vs smallest depth'], ['fillSendsPerSecond', 'filled at (sends/s, one chat)']]),
      await chart('history', lineChart(r.rows, { title: 'getMessages p50 against history depth', x: 'depth', xTitle: 'messages in the chat (log)', y: 'p50Ms', yTitle: 'p50 latency (ms)', logX: true, series: 'page' })),
    ].join('\n'),
  flood: async (r, chart) => {
    const bars = r.rows.map((x) => ({ ...x, bar: x.flood ? `${x.flood === 'obey' ? 'obeying' : 'ignoring'} flood` : 'alone' }));
    return [
      table(r.rows, [['phase', 'phase'], ['flood', 'flood'], ['offeredPerSecond', 'quiet msgs/s'], ['deliveredPct', 'delivered %'], ['p50Ms', 'p50 ms'], ['p99Ms', 'p99 ms'], ['p999Ms', 'p99.9 ms'], ['refusedByCode', 'quiet sends refused'], ['floodActionsPerSecond', 'flood actions/s'], ['floodAcceptedPerSecond', 'flood accepted/s'], ['floodRefusedByCode', 'flood refused'], ['floodUnanswered', 'flood unanswered (on closed sockets)'], ['floodSocketsClosed', 'flood sockets closed'], ['floodUpgradesRefused', 'flood reconnects refused'], ['nodeCpuCoresDuringFlood', 'node cores'], ['floodProcessCpuCores', 'flooding process cores'], ['generatorLagP99Ms', 'generator lag p99 ms']]),
      await chart('flood', barChart(bars, { title: "The quiet tenant's p99, alone and during the flood", y: 'p99Ms', yTitle: 'p99 latency (ms)', x: 'bar' })),
    ].join('\n');
  },
  webhooks: async (r, chart) => {
    const ratios = (r.summary as { ratios?: { sends?: number; p99?: number } }).ratios;
    return [
      table(r.rows, [['round', 'round'], ['mode', 'webhooks'], ['ackedPerSecond', 'acked sends/s'], ['p50Ms', 'p50 ms'], ['p99Ms', 'p99 ms'], ['serverCpuUsPerSend', 'server CPU µs / send'], ['deliveredPerSecond', 'message.new delivered/s'], ['eventsDelivered', 'message.new delivered'], ['sendsAcked', 'sends acked'], ['catchUpMs', 'deliveries caught up after (ms)'], ['receiverCpuUsPerRequest', 'receiver CPU µs / request'], ['errors', 'errors']]),
      `With one endpoint ÷ without: sends/s ${ratios?.sends ?? '–'}×, p99 ${ratios?.p99 ?? '–'}× (means of the rounds)${roundRange(r.rows)}.\n`,
      await chart('webhooks', barChart(r.rows.map((x) => ({ ...x, bar: `${x.mode}, round ${x.round}` })), { title: 'Acknowledged sends per second, without and with a webhook endpoint', y: 'ackedPerSecond', yTitle: 'acked sends/s', x: 'bar' })),
    ].join('\n');
  },
  push: async (r, chart) => {
    const ratios = (r.summary as { ratios?: { sends?: number; cpuPerSend?: number } }).ratios;
    return [
      table(r.rows, [['round', 'round'], ['mode', 'push'], ['ackedPerSecond', 'acked sends/s'], ['p50Ms', 'p50 ms'], ['p99Ms', 'p99 ms'], ['serverCpuUsPerSend', 'server CPU µs / send'], ['sendsAcked', 'sends acked'], ['pushesMade', 'pushes made'], ['recipientsUpToDate', "recipients shown their chat's newest"], ['lastPushAfterRunMs', "last of those after the run's end (ms)"], ['errors', 'errors']]),
      `With Web Push ÷ without: sends/s ${ratios?.sends ?? '–'}×, server CPU per send ${ratios?.cpuPerSend ?? '–'}× (means of the rounds)${roundRange(r.rows, 'no push')}.\n`,
      await chart('push', barChart(r.rows.map((x) => ({ ...x, bar: `${x.mode}, round ${x.round}` })), { title: 'Acknowledged sends per second, every recipient offline, without and with Web Push', y: 'ackedPerSecond', yTitle: 'acked sends/s', x: 'bar' })),
    ].join('\n');
  },
  blocklist: async (r, chart) => {
    const ratios = (r.summary as { ratios?: { sends?: number; p99?: number } }).ratios;
    return [
      table(r.rows, [['round', 'round'], ['mode', 'blocklist'], ['ackedPerSecond', 'acked sends/s'], ['p50Ms', 'p50 ms'], ['p99Ms', 'p99 ms'], ['serverCpuUsPerSend', 'server CPU µs / send'], ['sendsAcked', 'sends acked'], ['errors', 'errors']]),
      `With the blocklist ÷ without: sends/s ${ratios?.sends ?? '–'}×, p99 ${ratios?.p99 ?? '–'}× (means of the rounds).\n`,
      await chart('blocklist', barChart(r.rows.map((x) => ({ ...x, bar: `${x.mode}, round ${x.round}` })), { title: 'Acknowledged sends per second, without and with a 10,000-entry blocklist', y: 'ackedPerSecond', yTitle: 'acked sends/s', x: 'bar' })),
    ].join('\n');
  },
  attachments: async (r, chart) => {
    const ratios = (r.summary as { ratios?: { cpuPerSend?: number; sendsPerSecond?: number } }).ratios;
    const uploads = r.rows.filter((x) => x.uploads !== undefined);
    const sends = r.rows.filter((x) => x.uploads === undefined);
    return [
      table(uploads, [['mode', 'uploads'], ['uploads', 'files'], ['uploadsPerSecond', 'uploads/s'], ['megabytesPerSecond', 'MB/s'], ['p50Ms', 'p50 ms'], ['p99Ms', 'p99 ms'], ['serverCpuMsPerUpload', 'server CPU ms / upload']]),
      table(sends, [['round', 'round'], ['mode', 'send'], ['sendsPerSecond', 'sends/s'], ['p50Ms', 'p50 ms'], ['p99Ms', 'p99 ms'], ['serverCpuUsPerSend', 'server CPU µs / send'], ['sends', 'sends'], ['errors', 'errors']]),
      `With one attachment ÷ without: server CPU per send ${ratios?.cpuPerSend ?? '–'}× (goal ≤ 1.5×), sends/s ${ratios?.sendsPerSecond ?? '–'}× (means of the rounds).\n`,
      await chart('attachments', barChart(sends.map((x) => ({ ...x, bar: `${x.mode}, round ${x.round}` })), { title: 'Server CPU per send over HTTP, without and with one finalized attachment', y: 'serverCpuUsPerSend', yTitle: 'server CPU µs / send', x: 'bar' })),
    ].join('\n');
  },
  threads: async (r, chart) => {
    const bars = r.rows.map((x) => ({ ...x, bar: Number(x.followed) === 1 ? '1 thread' : `${x.followed} threads`, panel: String(x.store) }));
    return [
      table(r.rows, [['store', 'store'], ['followed', 'threads followed'], ['size', 'page size'], ['requestsPerSecond', 'inboxes/s'], ['p50Ms', 'p50 ms'], ['p99Ms', 'p99 ms'], ['p50VsOne', 'p50 vs one thread'], ['errors', 'errors']]),
      await chart('threads', barChart(bars, { title: 'GET /api/users/me/threads: p99 by the threads the user follows', y: 'p99Ms', yTitle: 'p99 ms', group: 'panel', x: 'bar' })),
    ].join('\n');
  },
  search: async (r, chart) => {
    const cost = r.rows.filter((x) => x.part === 'send cost');
    const queries = r.rows.filter((x) => x.part === 'query');
    type Disk = { disk?: { searchBytesPerMessage?: number; messagesBytesPerMessage?: number; error?: string } };
    const s = r.summary as { sendCost?: { ratio?: number }; clusterSendCost?: { ratio?: number; ratios?: number[] }; embedded?: Disk; cassandra?: Disk };
    // A composed result may hold several runs of the cluster's pair (their ratios listed).
    const cluster = s.clusterSendCost?.ratio === undefined ? '' : ` Cluster: ${s.clusterSendCost.ratio}×${s.clusterSendCost.ratios ? ` (the median of ${s.clusterSendCost.ratios.map((x) => `${x}×`).join(', ')})` : ''}.`;
    const disk = (name: string, d: Disk | undefined) =>
      d?.disk === undefined ? '' : d.disk.error !== undefined ? ` ${name} index on disk: not measured (${d.disk.error}).` : ` ${name} index: ${d.disk.searchBytesPerMessage ?? '–'} bytes per message on disk (the messages themselves: ${d.disk.messagesBytesPerMessage ?? '–'}).`;
    return [
      table(cost, [['store', 'store'], ['run', 'run'], ['searchIndex', 'SEARCH_INDEX'], ['offeredPerSecond', 'offered sends/s'], ['ackedPerSecond', 'acked sends/s'], ['serverCpuUsPerSend', 'server CPU µs / send'], ['p99Ms', 'ack p99 ms']]),
      `Indexed ÷ not: server CPU per send ${s.sendCost?.ratio ?? '–'}× on one node (goal ≤ 1.3×).${cluster}${disk('Embedded', s.embedded)}${disk('Cassandra', s.cassandra)}\n`,
      table(queries, [['store', 'store'], ['query', 'query'], ['q', 'words'], ['hitsOnFirstPage', 'hits (first page)'], ['queriesPerSecond', 'searches/s'], ['p50Ms', 'p50 ms'], ['p99Ms', 'p99 ms'], ['errors', 'errors']]),
      await chart('search', barChart(queries.map((x) => ({ ...x, bar: String(x.query), panel: String(x.store) })), { title: 'GET /api/search/messages: p99 by query', y: 'p99Ms', yTitle: 'p99 ms', group: 'panel', x: 'bar' })),
    ].join('\n');
  },
  chatlist: async (r, chart) => {
    // One bar per user (as the chart's "system"), one panel per store and page size.
    const bars = r.rows.map((x) => ({ ...x, bar: Number(x.userChats) === 1 ? '1 chat' : `${x.userChats} chats`, panel: `${x.store}, size ${x.size}` }));
    return [
      table(r.rows, [['store', 'store'], ['size', 'page size'], ['userChats', "user's chats"], ['requestsPerSecond', 'lists/s'], ['p50Ms', 'p50 ms'], ['p99Ms', 'p99 ms'], ['throughputVsOneChat', 'lists/s vs one chat'], ['p50VsOneChat', 'p50 vs one chat'], ['errors', 'errors']]),
      await chart('chatlist', barChart(bars, { title: 'GET /api/chats: lists per second by the user\'s chat count', y: 'requestsPerSecond', yTitle: 'lists/s', group: 'panel', x: 'bar' })),
    ].join('\n');
  },
};

/**
 * RESULTS.md from every `<scenario>.json` in `dir`, with SVG charts written next to the JSON.
 * Returns the files written.
 */
export async function writeReport(dir: string, reportPath: string): Promise<string[]> {
  const written: string[] = [];
  mkdirSync(dirname(reportPath), { recursive: true });
  const results = ORDER.map((s) => join(dir, `${s}.json`)).filter(existsSync).map((f) => JSON.parse(readFileSync(f, 'utf8')) as ScenarioResult);
  const chart = async (name: string, svg: Promise<string>) => {
    const file = join(dir, `${name}.svg`);
    writeFileSync(file, await svg);
    written.push(file);
    return `![${name}](${relative(dirname(reportPath), file)})\n`;
  };
  const parts = ['# Benchmark results\n', '<!-- Written by `npm run bench`; the JSON and CSV next to the charts hold every figure. -->\n'];
  if (results.length === 0) parts.push('No results yet: run `npm run bench -- all`.\n');
  // One line per machine (free memory, which differs from run to run, is left out); each
  // section names the machine its run had.
  const machineOf = (r: ScenarioResult) => `${r.meta.machine.cpu}, ${r.meta.machine.cores} cores, ${r.meta.machine.memoryGiB} GiB, ${r.meta.machine.os}`;
  const machines = [...new Set(results.map(machineOf))];
  if (machines.length === 1) parts.push(`Machine: ${machines[0]}. Server, peers and load generator all run on it.\n`);
  else if (machines.length > 1) parts.push(`Machines: server, peers and load generator all run on one, and each section names the one its run had.\n\n${machines.map((m) => `- ${m}`).join('\n')}\n`);
  for (const r of results) {
    parts.push(`## ${r.scenario}\n`);
    parts.push(`Run ${r.meta.date} at commit \`${r.meta.commit}\`${r.meta.dirty ? ' (with uncommitted changes)' : ''} on ${machineOf(r)}; Node ${r.meta.versions.node}, uWebSockets.js ${r.meta.versions['uWebSockets.js']}, Socket.IO ${r.meta.versions['socket.io']}.\n`);
    parts.push(`\`\`\`\n${r.command}\n\`\`\`\n`);
    parts.push(`Parameters: \`${JSON.stringify(r.parameters)}\`\n`);
    parts.push(await SECTIONS[r.scenario]!(r, chart));
    parts.push(goals(r.summary));
    for (const note of r.notes) parts.push(`- ${note}`);
    parts.push('');
  }
  writeFileSync(reportPath, `${parts.join('\n')}\n`);
  written.push(reportPath);
  return written;
}
