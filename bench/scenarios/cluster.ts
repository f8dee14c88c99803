import { fanout, OVERLOAD_NOTE, overloadGoal, type SystemFanout } from './fanout.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';
import { clusterServices } from '../lib/services.ts';

/** The cluster goal: this service's rate, latency and what a message costs the nodes and Cassandra. */
const GOAL = { maxRate: 2500, p99At70PctMs: 100, cassandraCpuUsPerPersisted: 200, nodeCpuUsPerMessage: 500, stretchVsUws: 0.5 };

/**
 * Fanout across three nodes of each system: this service on Cassandra and Redis (those the
 * environment names when they answer, else started with scripts/services.sh and stopped again
 * after), Socket.IO with its Redis adapter, uws publishing through Redis. The members of each room
 * are spread over the nodes. Besides the fanout figures: Redis's and Cassandra's CPU, what a message
 * costs the nodes and Cassandra, Cassandra's statements per message, and the overload run.
 */
export async function cluster(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const { services, stop: stopServices } = await clusterServices(ctx);
  try {
    const plan = {
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
