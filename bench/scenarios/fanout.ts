import type { Row } from '../lib/output.ts';
import { startSingle, startThree, type ClusterServices, type Target } from '../lib/targets.ts';
import type { SystemName } from '../load/systems.ts';
import { fanoutStep, roomConnections, round, sweep, type Context, type FanoutPlan } from './context.ts';

export interface FanoutOptions extends FanoutPlan {
  /** A fixed rate (messages/s in total) instead of a sweep. */
  rate?: number;
  startRate: number;
  maxSteps: number;
  /** A run of this long at the first rate before measuring anything, not recorded: warms up JITs. */
  primeMs?: number;
}

export interface SystemFanout {
  maxRate: number;
  maxDeliveredPerSecond: number;
  /** The sweep never failed within its steps: the highest rate is at least maxRate. */
  capped: boolean;
  at70: Row | undefined;
}

/**
 * Fanout on each system: rooms × members online, open-loop sends. With a fixed rate one run per
 * system; otherwise the sweep for the highest rate with p99 under the limit, then a run at 70% of
 * it. `cluster` runs every system on three nodes sharing Redis (and Cassandra).
 */
export async function fanout(ctx: Context, options: FanoutOptions, cluster?: ClusterServices): Promise<{ rows: Row[]; summary: Record<SystemName, SystemFanout> }> {
  const rows: Row[] = [];
  const summary = {} as Record<SystemName, SystemFanout>;
  for (const system of ctx.systems) {
    ctx.progress.plan(options.rate ? 2 : options.maxSteps + 2, `${system}: starting`);
    const users = options.rooms * options.members;
    const start = () => (cluster ? startThree(system, cluster, { users, profileDir: ctx.profileDir }) : startSingle(system, { users, profileDir: ctx.profileDir }));
    let target: Target | undefined;
    try {
      target = await start();
      const conns = await roomConnections(target, options.rooms, options.members);
      const opened = await ctx.pool.open(conns);
      if (opened.failed > 0) throw new Error(`${system}: ${opened.failed} connections failed: ${JSON.stringify(opened.errors)}`);
      if (options.primeMs) {
        ctx.progress.stage(`${system}: warming up for ${options.primeMs / 1000} s`);
        await fanoutStep(ctx, target, { ...options, warmupMs: options.primeMs, durationMs: 1000 }, options.rate ?? options.startRate);
      }
      ctx.progress.step();
      if (options.rate) {
        const step = await fanoutStep(ctx, target, options, options.rate);
        rows.push({ ...step.row, phase: 'fixed' });
        summary[system] = { maxRate: step.ok ? options.rate : 0, maxDeliveredPerSecond: Number(step.row.deliveredPerSecond), capped: step.ok, at70: undefined };
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
        summary[system] = { maxRate: found.maxRate, maxDeliveredPerSecond: Number(best?.deliveredPerSecond ?? 0), capped: found.capped, at70 };
        ctx.log(`${system}: highest rate with p99 < ${options.p99LimitMs} ms: ${found.maxRate}/s (${summary[system].maxDeliveredPerSecond} deliveries/s); at 70%: p99 ${at70?.p99Ms ?? '-'} ms`);
      }
      ctx.progress.step();
    } finally {
      await ctx.pool.closeAll();
      await target?.stop();
    }
  }
  return { rows, summary };
}
