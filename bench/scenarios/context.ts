import type { LoadPool } from '../load/pool.ts';
import type { ConnSpec, SystemName } from '../load/systems.ts';
import { statementsPerMessage } from '../lib/cassandra-stats.ts';
import { percentiles } from '../lib/histogram.ts';
import { readNodeCounters, sendTimeParts } from '../lib/node-metrics.ts';
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

/** How long a step waits after its last send for answers and deliveries, at most. */
export const DRAIN_MS = 8000;

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
  /** How long a step waits after its last send for answers and deliveries, at most (default DRAIN_MS). */
  drainMs?: number;
}

/** How many of a step's sends may be refused or go unanswered, as of deliveries lost: 0.1%. */
const TOLERANCE = 0.001;

/** CPU seconds some processes (Redis's, Cassandra's) have used so far, summed, or undefined when none is known. */
const cpuOf = async (pids: number[] | undefined) => (pids === undefined || pids.length === 0 ? undefined : (await processStats(pids)).cpuSeconds);
const used = (after: number | undefined, before: number | undefined) => (after === undefined || before === undefined ? undefined : after - before);

/** Counts by code as one cell: `RATE_LIMITED 12, UNAVAILABLE 3`, or null when there are none. */
const byCode = (counts: Record<string, number>): string | null => {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return entries.length === 0 ? null : entries.map(([code, n]) => `${code} ${n}`).join(', ');
};

/**
 * One open-loop run at `rate` messages per second in total (spread evenly over the rooms' senders):
 * delivered messages per second, end-to-end latency percentiles, server and generator CPU, what
 * each acknowledged message cost the nodes (and Redis and Cassandra where the target names them),
 * and the sends the server refused (error frames, by code) or never answered within the drain.
 * It passes if p99 stays under the limit, at least 99.9% of the deliveries expected from the
 * accepted (not refused) sends arrived, and at most 0.1% of the sends were refused or unanswered
 * (a server that sheds load could otherwise pass at any rate by refusing what it cannot carry).
 */
export async function fanoutStep(ctx: Context, target: Target, plan: FanoutPlan, rate: number): Promise<FanoutStep> {
  const services = target.services ?? {};
  const counters = () =>
    services.cassandra?.snapshot().catch((error: unknown) => {
      ctx.log(`${target.system}: Cassandra's counters not read: ${(error as Error).message}`);
      return undefined;
    });
  const before = await processStats(target.pids);
  const redisBefore = await cpuOf(services.redisPids);
  const cassandraBefore = await cpuOf(services.cassandraPids);
  const countersBefore = await counters();
  // This service's own counters of where a send's time goes (the peers have none).
  const nodeCounters = () => (target.system === 'chat' ? readNodeCounters(target.nodes) : Promise.resolve(undefined));
  const nodesBefore = await nodeCounters();
  const start = Date.now() + 300;
  const r = await ctx.pool.run({ op: 'fanout', start, warmupMs: plan.warmupMs, durationMs: plan.durationMs, ratePerSender: rate / plan.rooms, drainMs: plan.drainMs ?? DRAIN_MS, quietMs: 600 });
  const after = await processStats(target.pids);
  const redisCpu = used(await cpuOf(services.redisPids), redisBefore);
  const cassandraCpu = used(await cpuOf(services.cassandraPids), cassandraBefore);
  const countersAfter = await counters();
  const nodesAfter = await nodeCounters();
  const seconds = plan.durationMs / 1000;
  const refused = Object.values(r.refused).reduce((a, b) => a + b, 0);
  // A refused send is answered, not lost: only the accepted ones are expected at every member.
  const expected = (r.measuredSent - refused) * plan.members;
  const p = percentiles(r.histogram);
  const refusals = percentiles(r.refusalHistogram);
  const lag = percentiles(r.sendLagHistogram);
  const delivered = r.measuredDelivered;
  // Server, Redis and Cassandra CPU cover warmup, window and drain; so do the deliveries and the
  // acknowledged sends (messages) they are divided by.
  const serverCpu = after.cpuSeconds - before.cpuSeconds;
  const wall = (plan.warmupMs + plan.durationMs) / 1000;
  const perMessage = (cpu: number) => (r.acked === 0 ? null : round((cpu * 1e6) / r.acked, 1));
  const statements = countersBefore && countersAfter && services.cassandra ? statementsPerMessage(countersBefore, countersAfter, services.cassandra.keyspace, r.acked) : undefined;
  const ok = p.count > 0 && p.p99Ms < plan.p99LimitMs && delivered >= expected * (1 - TOLERANCE) && refused + r.unanswered <= r.measuredSent * TOLERANCE;
  return {
    ok,
    row: {
      system: target.system,
      offeredPerSecond: rate,
      sentPerSecond: round(r.measuredSent / seconds),
      ackedPerSecond: round(r.measuredAcked / seconds),
      deliveredPerSecond: round(delivered / seconds),
      deliveredMsgsPerSecond: round(delivered / plan.members / seconds, 1),
      deliveredPct: expected === 0 ? 0 : round((100 * delivered) / expected, 2),
      p50Ms: p.p50Ms,
      p99Ms: p.p99Ms,
      p999Ms: p.p999Ms,
      maxMs: p.maxMs,
      serverCpuUsPerDelivery: r.delivered === 0 ? null : round((serverCpu * 1e6) / r.delivered, 2),
      nodeCpuUsPerMessage: perMessage(serverCpu),
      serverCpuCores: round(serverCpu / wall, 2),
      // How much of it the kernel did: on loopback, each socket write carries the receiver's side too.
      serverKernelPct: after.systemCpuSeconds === undefined || before.systemCpuSeconds === undefined || serverCpu <= 0 ? null : round((100 * (after.systemCpuSeconds - before.systemCpuSeconds)) / serverCpu, 1),
      generatorCpuCores: round(r.generatorCpuSeconds / wall, 2),
      ...(redisCpu === undefined ? {} : { redisCpuCores: round(redisCpu / wall, 2) }),
      ...(cassandraCpu === undefined ? {} : { cassandraCpuCores: round(cassandraCpu / wall, 2), cassandraCpuUsPerPersisted: perMessage(cassandraCpu) }),
      ...(statements
        ? {
            cassandraRequestsPerMessage: statements.requests,
            cassandraMutationsPerMessage: statements.mutations,
            cassandraReadsPerMessage: statements.reads,
            cassandraPaxosWritesPerMessage: statements.paxosWrites,
            cassandraKeyspaceWritesPerMessage: statements.keyspaceWrites,
            cassandraWritesPerMessageByTable: Object.entries(statements.byTable).map(([table, n]) => `${table} ${n}`).join(', ') || null,
          }
        : {}),
      ...(nodesBefore && nodesAfter ? sendTimeParts(nodesBefore, nodesAfter, wall, target.nodes.length) : {}),
      sendErrors: r.errors,
      refused,
      refusedByCode: byCode(r.refused),
      refusalP99Ms: refused === 0 ? null : refusals.p99Ms,
      // The generator's own lateness: latency it adds to every system alike (a saturated machine).
      generatorLagP99Ms: lag.count === 0 ? null : lag.p99Ms,
      unanswered: r.unanswered,
      ok,
    },
  };
}

/** A step's figures in one line, for the log. */
export function describe(row: Row): string {
  const refusals = Number(row.refused) > 0 ? `, refused ${row.refusedByCode} (p99 ${row.refusalP99Ms} ms)` : '';
  const unanswered = Number(row.unanswered) > 0 ? `, ${row.unanswered} unanswered` : '';
  return `delivered ${row.deliveredPerSecond}/s (${row.deliveredPct}%), p99 ${row.p99Ms} ms${refusals}${unanswered}, server ${row.serverCpuCores} cores, generator ${row.generatorCpuCores} cores (its send lag p99 ${row.generatorLagP99Ms ?? '–'} ms)`;
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
    ctx.log(`${target.system} ${rate}/s: ${describe(step.row)}${step.ok ? '' : ' (fails)'}`);
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
