import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fanout, OVERLOAD_NOTE, overloadGoal } from './fanout.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';
import { whileRunning } from '../lib/cleanup.ts';

const SERVICES = new URL('../../scripts/services.sh', import.meta.url).pathname;

/** A service's pid from the file scripts/services.sh keeps in its state dir (same default). */
function servicePid(name: 'redis' | 'cassandra'): number | undefined {
  const dir = process.env.SERVICES_STATE_DIR ?? new URL('../../tmp/services', import.meta.url).pathname;
  try {
    const pid = Number(readFileSync(`${dir}/${name}/${name}.pid`, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether something accepts connections at `host:port` (within 2 s). */
function reachable(address: string): Promise<boolean> {
  const url = new URL(address.includes('://') ? address : `tcp://${address}`);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

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
  const cassandra = process.env.CASSANDRA_CONTACT_POINTS ?? `127.0.0.1:${process.env.CASSANDRA_PORT ?? 9042}`;
  const redisUrl = process.env.REDIS_URL ?? `redis://127.0.0.1:${process.env.REDIS_PORT ?? 6379}`;
  // `status` exits 0 only when both answer (and 1 when either is stopped or not ready yet); both
  // answering where the environment says (started some other way) will do as well.
  const wasReady = spawnSync(SERVICES, ['status'], { stdio: 'ignore' }).status === 0 || ((await reachable(cassandra.split(',')[0]!)) && (await reachable(redisUrl)));
  let stopServices = () => undefined as void;
  if (!wasReady) {
    ctx.progress.plan(1, 'starting Redis and Cassandra (scripts/services.sh)');
    execFileSync(SERVICES, ['start'], { stdio: ['ignore', 'ignore', 'inherit'] });
    stopServices = () => void execFileSync(SERVICES, ['stop'], { stdio: 'ignore' });
    ctx.progress.step();
  }
  const untrack = whileRunning(stopServices);
  try {
    const services = {
      cassandra,
      redisUrl,
      redisPid: servicePid('redis'),
      cassandraPid: servicePid('cassandra'),
    };
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
    const vsUws = (withRatio.ratios as Record<string, number | null>).chatVsuws ?? null;
    const atMost = (got: unknown, want: number) => ({ want: `≤ ${want}`, got: got ?? null, met: typeof got === 'number' && got <= want });
    const goal = chat
      ? {
          maxRate: { want: `≥ ${GOAL.maxRate} with p99 < ${plan.p99LimitMs} ms`, got: chat.maxRate, met: chat.maxRate >= GOAL.maxRate },
          p99At70PctMs: { want: `< ${GOAL.p99At70PctMs}`, got: chat.at70?.p99Ms ?? null, met: Number(chat.at70?.p99Ms ?? Infinity) < GOAL.p99At70PctMs },
          // At the highest rate that passed.
          cassandraCpuUsPerPersisted: atMost(chat.atMax?.cassandraCpuUsPerPersisted, GOAL.cassandraCpuUsPerPersisted),
          nodeCpuUsPerMessage: atMost(chat.atMax?.nodeCpuUsPerMessage, GOAL.nodeCpuUsPerMessage),
          overload: overloadGoal(chat, plan.p99LimitMs),
          stretchVsUws: { want: GOAL.stretchVsUws, got: vsUws, met: (vsUws ?? 0) >= GOAL.stretchVsUws },
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
    untrack();
    stopServices();
  }
}

/** This service's highest delivered rate against each peer's. */
export function withRatios(summary: Record<string, { maxDeliveredPerSecond: number }>): Record<string, unknown> {
  const chat = summary.chat?.maxDeliveredPerSecond;
  const ratios: Record<string, number | null> = {};
  for (const peer of ['uws', 'socketio'])
    if (chat !== undefined && summary[peer]) ratios[`chatVs${peer}`] = summary[peer]!.maxDeliveredPerSecond > 0 ? round(chat / summary[peer]!.maxDeliveredPerSecond, 3) : null;
  return { ...summary, ratios };
}
