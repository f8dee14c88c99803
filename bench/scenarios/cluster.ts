import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fanout } from './fanout.ts';
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

/**
 * Fanout across three nodes of each system: this service on Cassandra and Redis (started with
 * scripts/services.sh when not running, and stopped again after), Socket.IO with its Redis
 * adapter, uws publishing through Redis. The members of each room are spread over the nodes.
 */
export async function cluster(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  // `status` exits 0 only when both answer (and 1 when either is stopped or not ready yet).
  const wasReady = spawnSync(SERVICES, ['status'], { stdio: 'ignore' }).status === 0;
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
      cassandra: process.env.CASSANDRA_CONTACT_POINTS ?? `127.0.0.1:${process.env.CASSANDRA_PORT ?? 9042}`,
      redisUrl: process.env.REDIS_URL ?? `redis://127.0.0.1:${process.env.REDIS_PORT ?? 6379}`,
      redisPid: servicePid('redis'),
      cassandraPid: servicePid('cassandra'),
    };
    const plan = {
      rooms: o.num('rooms', o.smoke ? 2 : 12),
      members: o.num('members', o.smoke ? 3 : 24),
      warmupMs: o.warmup * 1000,
      durationMs: o.seconds * 1000,
      // A send is acked once Cassandra has it (a compare-and-set on the chat's head, then the
      // rows, each waiting for the commit log's group sync), which alone takes tens of
      // milliseconds: 50 ms would measure the database's latency, not the cluster's throughput.
      p99LimitMs: o.num('p99', 250, false),
      startRate: o.num('start-rate', o.smoke ? 20 : 100),
      maxSteps: o.num('max-steps', o.smoke ? 2 : 12),
      // Every system gets a first unrecorded run: Cassandra's JIT (and the nodes') warms up in it.
      primeMs: o.smoke ? 0 : 15_000,
      ...(o.list('rate') ? { rate: o.num('rate', 0) } : o.smoke ? { rate: 20 } : {}),
    };
    const { rows, summary } = await fanout(ctx, plan, services);
    return {
      parameters: { ...plan, nodes: 3, cassandra: services.cassandra, redis: services.redisUrl, workers: ctx.pool.size },
      rows,
      summary: withRatios(summary),
      notes: ['Everything runs on this one machine: 3 nodes of each system, Redis, Cassandra and the load generator share its cores.'],
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
