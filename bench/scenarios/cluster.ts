import { fanout, OVERLOAD_NOTE, overloadGoal, type SystemFanout } from './fanout.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';
import { clusterServices, HA_KEYSPACE, haServices, prepareKeyspace } from '../lib/services.ts';

/** The cluster goal: this service's rate, latency and what a message costs the nodes and Cassandra. */
const GOAL = { maxRate: 2500, p99At70PctMs: 100, cassandraCpuUsPerPersisted: 200, nodeCpuUsPerMessage: 500, stretchVsUws: 0.5 };

/** The sweep, warmups and overload run of the cluster scenario, on either topology. */
function clusterPlan(o: ScenarioOptions) {
  return {
    rooms: o.num('rooms', o.smoke ? 2 : 12),
    members: o.num('members', o.smoke ? 3 : 24),
    warmupMs: o.warmup * 1000,
    durationMs: o.seconds * 1000,
    // A send is acked once Cassandra has its batch (each waiting for the commit log's group
    // sync, with the database sharing two cores with everything else): 50 ms would measure
    // the database's latency rather than the cluster's throughput.
    p99LimitMs: o.num('p99', 250, false),
    startRate: o.num('start-rate', o.smoke ? 20 : 100),
    maxSteps: o.num('max-steps', o.smoke ? 2 : 12),
    // Every system gets a first unrecorded run: Cassandra's JIT (and the nodes') warms up in it.
    primeMs: o.smoke ? 0 : 15_000,
    // This service's first: Cassandra's JVM takes minutes of real load to reach its speed (the
    // same sweep found 465 msgs/s right after a restart and 2,463 a run later), so 90 s at
    // 1,000 msgs/s, not recorded.
    ...(o.smoke ? {} : { prime: { chat: { ms: 90_000, rate: 1000 } } }),
    overload: o.overload,
    ...(o.list('rate') ? { rate: o.num('rate', 0) } : o.smoke ? { rate: 20 } : {}),
  };
}

/**
 * Fanout across three nodes of each system: this service on Cassandra and Redis (those the
 * environment names when they answer, else started with scripts/services.sh and stopped again
 * after), Socket.IO with its Redis adapter, uws publishing through Redis. The members of each room
 * are spread over the nodes. Besides the fanout figures: Redis's and Cassandra's CPU, what a message
 * costs the nodes and Cassandra, Cassandra's statements per message, and the overload run. With
 * `--topology ha`, this service alone on the single and the replicated topology (clusterHa).
 */
export async function cluster(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  if (o.topology === 'ha') return clusterHa(ctx, o);
  const { services, stop: stopServices } = await clusterServices(ctx);
  try {
    const plan = clusterPlan(o);
    const { rows, summary } = await fanout(ctx, plan, services);
    const withRatio = withRatios(summary);
    const chat = summary.chat;
    const vsUws = uwsBound(summary.chat, summary.uws);
    const atMost = (got: unknown, want: number) => ({ want: `≤ ${want}`, got: got ?? null, met: typeof got === 'number' && got <= want });
    const goal = chat
      ? {
          maxRate: { want: `≥ ${GOAL.maxRate} with p99 < ${plan.p99LimitMs} ms`, got: chat.maxRate, met: chat.maxRate >= GOAL.maxRate },
          p99At70PctMs: { want: `< ${GOAL.p99At70PctMs}`, got: chat.at70?.p99Ms ?? null, met: Number(chat.at70?.p99Ms ?? Infinity) < GOAL.p99At70PctMs },
          // At the highest rate that passed.
          cassandraCpuUsPerPersisted: atMost(chat.atMax?.cassandraCpuUsPerPersisted, GOAL.cassandraCpuUsPerPersisted),
          nodeCpuUsPerMessage: atMost(chat.atMax?.nodeCpuUsPerMessage, GOAL.nodeCpuUsPerMessage),
          overload: overloadGoal(chat, plan.p99LimitMs),
          stretchVsUws: stretchGoal(vsUws.ratio, vsUws.upperBound),
        }
      : undefined;
    return {
      parameters: { ...plan, nodes: 3, cassandra: services.cassandra, redis: services.redisUrl, workers: ctx.pool.size },
      rows,
      summary: { ...withRatio, ...(goal ? { goal } : {}) },
      notes: [
        'Everything runs on this one machine: 3 nodes of each system, Redis, Cassandra and the load generator share its cores.',
        'Per message: node CPU is the three nodes\' CPU over the step (warmup, window and drain) divided by the sends acknowledged in it; Cassandra CPU per persisted message divides Cassandra\'s CPU over the same time by the same sends (this service acknowledges a send once Cassandra has it). Cassandra\'s CPU and statement counts are of the whole process: compaction and anything else it did during the step are included.',
        OVERLOAD_NOTE,
      ],
    };
  } finally {
    stopServices();
  }
}

/**
 * This service's highest delivered rate ÷ uws's, and whether that is only an upper bound. When the
 * uws sweep never failed, its highest rate is a lower bound on what uws sustains; its overload run
 * (offered twice that) is then evidence too if it passed the same p99 limit with everything
 * delivered, and the higher of the two gives the tighter bound.
 */
export function uwsBound(chat: SystemFanout | undefined, uws: SystemFanout | undefined): { ratio: number | null; upperBound: boolean } {
  if (!chat || !uws) return { ratio: null, upperBound: false };
  const overload = uws.capped && uws.overload?.ok === true ? Number(uws.overload.deliveredPerSecond) : 0;
  const best = Math.max(uws.maxDeliveredPerSecond, overload);
  return { ratio: best > 0 ? round(chat.maxDeliveredPerSecond / best, 3) : null, upperBound: uws.capped };
}

/**
 * The stretch goal: this service's highest rate against uws's (see uwsBound). A ratio that is only
 * an upper bound shows as `≤ x` and is never met: it could always be below the goal.
 */
export function stretchGoal(vsUws: number | null, upperBound: boolean): { want: number; got: number | string | null; met: boolean } {
  if (vsUws === null) return { want: GOAL.stretchVsUws, got: null, met: false };
  if (upperBound) return { want: GOAL.stretchVsUws, got: `≤ ${vsUws}`, met: false };
  return { want: GOAL.stretchVsUws, got: vsUws, met: vsUws >= GOAL.stretchVsUws };
}

/** This service's highest delivered rate against each peer's. */
export function withRatios(summary: Record<string, { maxDeliveredPerSecond: number }>): Record<string, unknown> {
  const chat = summary.chat?.maxDeliveredPerSecond;
  const ratios: Record<string, number | null> = {};
  for (const peer of ['uws', 'socketio'])
    if (chat !== undefined && summary[peer]) ratios[`chatVs${peer}`] = summary[peer]!.maxDeliveredPerSecond > 0 ? round(chat / summary[peer]!.maxDeliveredPerSecond, 3) : null;
  return { ...summary, ratios };
}

/** The replicated topology's goal: its highest rate at least half the single topology's. */
export const HA_GOAL = 0.5;

/**
 * The replicated topology's highest rate ÷ the single one's, against HA_GOAL. A sweep that never
 * failed gives only a lower bound for its topology: the ratio is then a lower bound (the ha sweep)
 * or an upper one (the single sweep), shown as `≥ x` or `≤ x`; a lower bound meets the goal when it
 * is over it, an upper bound never does, and with both sweeps unfailed (a fixed --rate that both
 * passed) the ratio measures nothing.
 */
export function haVsSingleGoal(single: SystemFanout | undefined, ha: SystemFanout | undefined): { want: string; got: number | string | null; single: number | null; ha: number | null; met: boolean } {
  const want = `≥ ${HA_GOAL}× the single topology's highest rate${single && single.maxRate > 0 ? ` (≥ ${Math.ceil(single.maxRate * HA_GOAL).toLocaleString('en-US')} msgs/s in this run)` : ''}`;
  const rates = { single: single?.maxRate ?? null, ha: ha?.maxRate ?? null };
  if (!single || !ha || single.maxRate <= 0) return { want, got: null, ...rates, met: false };
  const ratio = round(ha.maxRate / single.maxRate, 3);
  if (single.capped && ha.capped) return { want, got: `${ratio} (neither sweep failed: not a measured ratio)`, ...rates, met: false };
  if (single.capped) return { want, got: `≤ ${ratio}`, ...rates, met: false };
  if (ha.capped) return { want, got: `≥ ${ratio}`, ...rates, met: ratio >= HA_GOAL };
  return { want, got: ratio, ...rates, met: ratio >= HA_GOAL };
}

/** What a message cost at a topology's highest rate, for the summary. */
const costs = (s: SystemFanout | undefined) => ({
  maxRate: s?.maxRate ?? null,
  capped: s?.capped ?? null,
  p99At70PctMs: s?.at70?.p99Ms ?? null,
  nodeCpuUsPerMessage: s?.atMax?.nodeCpuUsPerMessage ?? null,
  cassandraCpuUsPerPersisted: s?.atMax?.cassandraCpuUsPerPersisted ?? null,
  cassandraCpuCores: s?.atMax?.cassandraCpuCores ?? null,
  redisCpuCores: s?.atMax?.redisCpuCores ?? null,
});

/**
 * `cluster --topology ha`: this service alone, with the same sweep, first on the single topology
 * (one Cassandra, one Redis: the default form's) and then on the replicated one (the three-node
 * Cassandra ring at replication factor 3 and the six-node Redis Cluster), in one run. The
 * replicated topology's keyspace is kept between runs (HA_KEYSPACE): only the first run pays for
 * its schema. Reports both highest rates, their ratio against HA_GOAL, and what a message cost
 * each (the ring's CPU and statements summed over its three nodes).
 */
async function clusterHa(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const plan = clusterPlan(o);
  const chatOnly: Context = { ...ctx, systems: ['chat'] };
  const single = await clusterServices(ctx);
  let ha: Awaited<ReturnType<typeof haServices>> | undefined;
  try {
    ha = await haServices(ctx);
    const ring = new Set(ha.services.cassandra.split(','));
    if (single.services.cassandra.split(',').some((point) => ring.has(point)))
      throw new Error(`CASSANDRA_CONTACT_POINTS (${single.services.cassandra}) names the replicated ring, which --topology ha measures beside the single topology: unset it, or point it at the single Cassandra (scripts/services.sh env)`);
    ctx.progress.plan(1, `keyspace ${HA_KEYSPACE} on the ring (the first run creates it: minutes)`);
    const keyspace = await prepareKeyspace(ha.services.cassandra, HA_KEYSPACE, ha.replicationFactor);
    ctx.progress.step();
    ctx.log(keyspace.applied.length > 0 ? `keyspace ${HA_KEYSPACE} at replication factor ${ha.replicationFactor}: ${keyspace.applied.length} migrations applied in ${keyspace.seconds} s (kept for the next runs)` : `keyspace ${HA_KEYSPACE}: up to date (${keyspace.seconds} s)`);
    // The single topology's nodes get one Redis and replication factor 1, whatever the caller's
    // environment says (it may hold the replicated topology's variables).
    const singleRun = await fanout(chatOnly, plan, { ...single.services, nodeEnv: { REDIS_CLUSTER_NODES: '', CASSANDRA_REPLICATION_FACTOR: '1' } });
    const haRun = await fanout(chatOnly, plan, ha.services);
    const [s, h] = [singleRun.summary.chat, haRun.summary.chat];
    const goal = haVsSingleGoal(s, h);
    ctx.log(`highest rate with p99 < ${plan.p99LimitMs} ms: single ${s?.maxRate ?? '-'}/s, ha ${h?.maxRate ?? '-'}/s: ha ÷ single ${goal.got ?? '-'} (goal ${goal.want}: ${goal.met ? 'met' : 'not met'})`);
    return {
      scenario: 'cluster-ha',
      parameters: {
        ...plan,
        nodes: 3,
        workers: ctx.pool.size,
        single: { cassandra: single.services.cassandra, redis: single.services.redisUrl },
        ha: {
          cassandra: ha.services.cassandra,
          replicationFactor: ha.replicationFactor,
          redisClusterNodes: ha.redisClusterNodes,
          keyspace: HA_KEYSPACE,
          keyspaceMigrationsApplied: keyspace.applied.length,
          keyspaceSeconds: keyspace.seconds,
          cassandraProcesses: ha.services.cassandraPids.length,
          redisProcesses: ha.services.redisPids.length,
        },
      },
      rows: [...singleRun.rows.map((r) => ({ topology: 'single', ...r })), ...haRun.rows.map((r) => ({ topology: 'ha', ...r }))],
      summary: { single: s, ha: h, costs: { single: costs(s), ha: costs(h) }, goal },
      notes: [
        'Everything runs on this one machine: the 3 nodes, both topologies (the single Cassandra and Redis; the ring\'s three Cassandra JVMs and the six Redis processes), the control service and the load generator share its cores. Each topology idles while the other is measured.',
        'This service only: one sweep on the single topology, then the same on the replicated one, each after its own 90 s warmup at 1,000 msgs/s. ha ÷ single divides the highest rates with p99 under the limit.',
        'Per message: node CPU is the three nodes\' CPU over the step (warmup, window and drain) divided by the sends acknowledged in it; Cassandra CPU per persisted message divides Cassandra\'s CPU over the same time by the same sends, on the ring summed over its three JVMs (and Redis cores over its six processes).',
        `The ring's statement counts are summed over its three nodes: at replication factor ${ha.replicationFactor} every write is applied on each replica, so mutations and keyspace writes per message are about ${ha.replicationFactor} times the single topology's, while a request is counted once, by the node that coordinated it.`,
        `The ring's keyspace (${HA_KEYSPACE}) is kept between runs, each run's data under an application of its own: ${keyspace.applied.length > 0 ? `this run created it (${keyspace.applied.length} migrations, ${keyspace.seconds} s)` : 'this run found it up to date'}.`,
        OVERLOAD_NOTE,
      ],
    };
  } finally {
    ha?.stop();
    single.stop();
  }
}
