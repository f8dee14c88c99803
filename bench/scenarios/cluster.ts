import { execFileSync } from 'node:child_process';
import { fanout } from './fanout.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';
import { whileRunning } from '../lib/cleanup.ts';

const SERVICES = new URL('../../scripts/services.sh', import.meta.url).pathname;

/**
 * Fanout across three nodes of each system: this service on Cassandra and Redis (started with
 * scripts/services.sh when not running, and stopped again after), Socket.IO with its Redis
 * adapter, uws publishing through Redis. The members of each room are spread over the nodes.
 */
export async function cluster(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const status = () => execFileSync(SERVICES, ['status'], { encoding: 'utf8' });
  const wasReady = /redis\s+running.*ready/.test(status()) && /cassandra\s+running.*ready/.test(status());
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
