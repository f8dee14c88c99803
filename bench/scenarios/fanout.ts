import type { Row } from '../lib/output.ts';
import { startSingle, startThree, type ClusterServices, type Target } from '../lib/targets.ts';
import type { SystemName } from '../load/systems.ts';
import { describe, DRAIN_MS, fanoutStep, roomConnections, round, sweep, type Context, type FanoutPlan } from './context.ts';

export interface FanoutOptions extends FanoutPlan {
  /** A fixed rate (messages/s in total) instead of a sweep. */
  rate?: number;
  startRate: number;
  maxSteps: number;
  /** A run of this long at the first rate before measuring anything, not recorded: warms up JITs. */
  primeMs?: number;
  /** Per system, a longer or faster warmup than `primeMs` at the first rate (cluster: Cassandra's). */
  prime?: Partial<Record<SystemName, { ms: number; rate: number }>>;
  /** After the sweep, one run offered at twice the highest rate that passed (default true). */
  overload?: boolean;
}

export interface SystemFanout {
  maxRate: number;
  maxDeliveredPerSecond: number;
  /** The sweep never failed within its steps: the highest rate is at least maxRate. */
  capped: boolean;
  /** The run at the highest rate that passed: what a message cost there. */
  atMax: Row | undefined;
  at70: Row | undefined;
  /** The run offered at twice the highest rate, with its delivered messages as a share of it. */
  overload: Row | undefined;
}

/** A refusal must come well under a second: this bound on its p99 is what the goal checks. */
export const REFUSAL_P99_LIMIT_MS = 500;

/** What the overload run's figures mean, for the notes under its table. */
export const OVERLOAD_NOTE = `Overload: one run offered at twice the highest rate that passed (M). Delivered msgs/s counts each message once (deliveries ÷ members). "Refused" are sends answered with an error frame, by code; their p99 is from the intended send time to the error. "Unanswered" got neither an ack nor an error within the drain (${DRAIN_MS / 1000} s after the last send). uws and socketio acknowledge on receipt and never refuse. The goal: at least 80% of M delivered, their p99 under twice the sweep's limit, every accepted send delivered, none unanswered, refusals with p99 under ${REFUSAL_P99_LIMIT_MS} ms.`;

/** The overload goal: most of the highest rate still delivered, on time, and the rest refused at once. */
export function overloadGoal(system: SystemFanout | undefined, p99LimitMs: number): Record<string, unknown> {
  const o = system?.overload;
  if (!o) return { met: false, got: 'not run (--no-overload, or no rate passed)' };
  const checks = {
    deliveredPctOfMax: { want: '≥ 80', got: o.pctOfMax, met: Number(o.pctOfMax) >= 80 },
    p99Ms: { want: `< ${2 * p99LimitMs}`, got: o.p99Ms, met: Number(o.p99Ms) > 0 && Number(o.p99Ms) < 2 * p99LimitMs },
    acceptedDeliveredPct: { want: '≥ 99.9', got: o.deliveredPct, met: Number(o.deliveredPct) >= 99.9 },
    unanswered: { want: 0, got: o.unanswered, met: o.unanswered === 0 },
    refusalP99Ms: { want: `< ${REFUSAL_P99_LIMIT_MS}`, got: o.refusalP99Ms, met: o.refusalP99Ms === null || Number(o.refusalP99Ms) < REFUSAL_P99_LIMIT_MS },
  };
  return { offeredPerSecond: o.offeredPerSecond, refused: o.refusedByCode, ...checks, met: Object.values(checks).every((c) => c.met) };
}

/**
 * Fanout on each system: rooms × members online, open-loop sends. With a fixed rate one run per
 * system; otherwise the sweep for the highest rate with p99 under the limit, then a run at 70% of
 * it. Then, unless turned off, the overload run: offered at twice the highest rate that passed (the
 * sweep's, or the fixed rate if it passed). `cluster` runs every system on three nodes sharing
 * Redis (and Cassandra).
 */
export async function fanout(ctx: Context, options: FanoutOptions, cluster?: ClusterServices): Promise<{ rows: Row[]; summary: Record<SystemName, SystemFanout> }> {
  const rows: Row[] = [];
  const summary = {} as Record<SystemName, SystemFanout>;
  for (const system of ctx.systems) {
    const overload = options.overload !== false;
    ctx.progress.plan((options.rate ? 2 : options.maxSteps + 2) + (overload ? 1 : 0), `${system}: starting`);
    const users = options.rooms * options.members;
    const start = () => (cluster ? startThree(system, cluster, { users, profileDir: ctx.profileDir }) : startSingle(system, { users, profileDir: ctx.profileDir }));
    let target: Target | undefined;
    try {
      target = await start();
      const conns = await roomConnections(target, options.rooms, options.members);
      const opened = await ctx.pool.open(conns);
      if (opened.failed > 0) throw new Error(`${system}: ${opened.failed} connections failed: ${JSON.stringify(opened.errors)}`);
      const prime = options.prime?.[system] ?? (options.primeMs ? { ms: options.primeMs, rate: options.rate ?? options.startRate } : undefined);
      if (prime) {
        ctx.progress.stage(`${system}: warming up for ${prime.ms / 1000} s at ${prime.rate}/s`);
        await fanoutStep(ctx, target, { ...options, warmupMs: prime.ms, durationMs: 1000 }, prime.rate);
      }
      ctx.progress.step();
      let mine: SystemFanout;
      if (options.rate) {
        const step = await fanoutStep(ctx, target, options, options.rate);
        const row: Row = { ...step.row, phase: 'fixed' };
        rows.push(row);
        mine = { maxRate: step.ok ? options.rate : 0, maxDeliveredPerSecond: Number(step.row.deliveredPerSecond), capped: step.ok, atMax: step.ok ? row : undefined, at70: undefined, overload: undefined };
      } else {
        const found = await sweep(ctx, target, options, options.startRate, options.maxSteps);
        rows.push(...found.steps);
        const best = found.steps.filter((r) => r.ok === true && r.offeredPerSecond === found.maxRate)[0];
        let at70: Row | undefined;
        if (found.maxRate > 0) {
          ctx.progress.stage(`${system}: at 70% of ${found.maxRate}/s`);
          at70 = { ...(await fanoutStep(ctx, target, options, round(found.maxRate * 0.7))).row, phase: '70% of max' };
          rows.push(at70);
        }
        mine = { maxRate: found.maxRate, maxDeliveredPerSecond: Number(best?.deliveredPerSecond ?? 0), capped: found.capped, atMax: best, at70, overload: undefined };
        ctx.log(`${system}: highest rate with p99 < ${options.p99LimitMs} ms: ${found.maxRate}/s (${mine.maxDeliveredPerSecond} deliveries/s); at 70%: p99 ${at70?.p99Ms ?? '-'} ms`);
      }
      summary[system] = mine;
      ctx.progress.step();
      if (overload && mine.maxRate > 0) {
        const rate = round(mine.maxRate * 2);
        ctx.progress.stage(`${system}: overload at ${rate}/s (2× ${mine.maxRate}/s)`);
        const step = await fanoutStep(ctx, target, options, rate);
        mine.overload = { ...step.row, phase: 'overload (2× max)', pctOfMax: round((100 * Number(step.row.deliveredMsgsPerSecond)) / mine.maxRate, 1) };
        rows.push(mine.overload);
        ctx.log(`${system} overload at ${rate}/s: ${describe(step.row)}; ${mine.overload.pctOfMax}% of ${mine.maxRate} msgs/s delivered`);
        ctx.progress.step();
      }
    } finally {
      await ctx.pool.closeAll();
      await target?.stop();
    }
  }
  return { rows, summary };
}
