import type { LoadPool } from '../load/pool.ts';
import type { ConnSpec, SystemName } from '../load/systems.ts';
import { percentiles } from '../lib/histogram.ts';
import type { Row } from '../lib/output.ts';
import type { Progress } from '../lib/progress.ts';
import { processStats } from '../lib/process-stats.ts';
import { createGroups } from '../lib/provision.ts';
import type { Target } from '../lib/targets.ts';

/** What every scenario runs with. */
export interface Context {
  pool: LoadPool;
  progress: Progress;
  systems: SystemName[];
  /** Where this service's CPU profiles go (`--profile`), if anywhere. */
  profileDir?: string;
  /** A line for the person watching (stderr). */
  log(line: string): void;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const round = (x: number, digits = 0) => Number(x.toFixed(digits));

/**
 * `rooms` rooms of `members` connections each on `target`, the first member of each the sender.
 * This service gets real group chats of real users (created here); the peers get room names. The
 * members of a room are spread over the target's nodes, so in a cluster most deliveries cross nodes.
 */
export async function roomConnections(target: Target, rooms: number, members: number): Promise<ConnSpec[]> {
  let roomIds: string[];
  if (target.system === 'chat') {
    const users = target.app!.users;
    if (users.length < rooms * members) throw new Error(`need ${rooms * members} users, have ${users.length}`);
    roomIds = await createGroups(target.nodes[0]!, Array.from({ length: rooms }, (_, i) => users.slice(i * members, (i + 1) * members)));
  } else roomIds = Array.from({ length: rooms }, (_, i) => `room-${i}`);
  const conns: ConnSpec[] = [];
  for (let i = 0; i < rooms; i++)
    for (let j = 0; j < members; j++)
      conns.push({
        system: target.system,
        base: target.nodes[(i + j) % target.nodes.length]!,
        room: roomIds[i]!,
        token: target.app?.users[i * members + j]!.jwt,
        sender: j === 0,
      });
  return conns;
}

export interface FanoutStep {
  row: Row;
  ok: boolean;
}

export interface FanoutPlan {
  rooms: number;
  members: number;
  warmupMs: number;
  durationMs: number;
  p99LimitMs: number;
}

/**
 * One open-loop run at `rate` messages per second in total (spread evenly over the rooms' senders):
 * delivered messages per second, end-to-end latency percentiles, server and generator CPU.
 * It passes if p99 stays under the limit and at least 99.9% of the expected deliveries arrived.
 */
export async function fanoutStep(ctx: Context, target: Target, plan: FanoutPlan, rate: number): Promise<FanoutStep> {
  const services = target.servicePids ?? [];
  const before = await processStats(target.pids);
  const servicesBefore = services.length > 0 ? await processStats(services) : undefined;
  const start = Date.now() + 300;
  const r = await ctx.pool.run({ op: 'fanout', start, warmupMs: plan.warmupMs, durationMs: plan.durationMs, ratePerSender: rate / plan.rooms, drainMs: 8000, quietMs: 600 });
  const after = await processStats(target.pids);
  const servicesAfter = servicesBefore ? await processStats(services) : undefined;
  const seconds = plan.durationMs / 1000;
  const expected = r.measuredSent * plan.members;
  const p = percentiles(r.histogram);
  const delivered = r.measuredDelivered;
  // Server CPU covers warmup, window and drain; so do the deliveries it is divided by.
  const serverCpu = after.cpuSeconds - before.cpuSeconds;
  const wall = (plan.warmupMs + plan.durationMs) / 1000;
  const ok = p.count > 0 && p.p99Ms < plan.p99LimitMs && delivered >= expected * 0.999;
  return {
    ok,
    row: {
      system: target.system,
      offeredPerSecond: rate,
      sentPerSecond: round(r.measuredSent / seconds),
      deliveredPerSecond: round(delivered / seconds),
      deliveredPct: expected === 0 ? 0 : round((100 * delivered) / expected, 2),
      p50Ms: p.p50Ms,
      p99Ms: p.p99Ms,
      p999Ms: p.p999Ms,
      maxMs: p.maxMs,
      serverCpuUsPerDelivery: r.delivered === 0 ? null : round((serverCpu * 1e6) / r.delivered, 2),
      serverCpuCores: round(serverCpu / wall, 2),
      generatorCpuCores: round(r.generatorCpuSeconds / wall, 2),
      ...(servicesBefore && servicesAfter ? { servicesCpuCores: round((servicesAfter.cpuSeconds - servicesBefore.cpuSeconds) / wall, 2) } : {}),
      sendErrors: r.errors,
      ok,
    },
  };
}

/**
 * The highest rate whose p99 stays under the limit with nothing lost: grows the rate by half
 * until a run fails, then bisects between the last pass and the first failure. Bounded in steps.
 */
export async function sweep(ctx: Context, target: Target, plan: FanoutPlan, startRate: number, maxSteps: number): Promise<{ steps: Row[]; maxRate: number; capped: boolean }> {
  const steps: Row[] = [];
  let good = 0;
  let bad = 0;
  let rate = startRate;
  for (let i = 0; i < maxSteps; i++) {
    ctx.progress.stage(`${target.system}: fanout at ${rate}/s`);
    const step = await fanoutStep(ctx, target, plan, rate);
    ctx.progress.step();
    steps.push({ ...step.row, phase: 'sweep' });
    ctx.log(`${target.system} ${rate}/s: delivered ${step.row.deliveredPerSecond}/s (${step.row.deliveredPct}%), p99 ${step.row.p99Ms} ms, server ${step.row.serverCpuCores} cores, generator ${step.row.generatorCpuCores} cores${step.ok ? '' : ' (fails)'}`);
    if (step.ok) good = rate;
    else bad = rate;
    if (bad === 0) rate = Math.round(rate * 1.5);
    else {
      if (good === 0 && bad <= startRate / 8) break;
      if (good === 0) rate = Math.round(bad / 2);
      else if (bad - good <= Math.max(10, good * 0.06)) break;
      else rate = Math.round((good + bad) / 2);
      // Let a backlog from an overloaded run clear before the next.
      if (!step.ok) await sleep(1000);
    }
  }
  // Never failed within the steps allowed: the highest rate is at least this.
  return { steps, maxRate: good, capped: bad === 0 };
}
