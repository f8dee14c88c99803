import { chatlist } from './chatlist.ts';
import { cluster, withRatios } from './cluster.ts';
import { connections } from './connections.ts';
import type { Context } from './context.ts';
import { fanout, OVERLOAD_NOTE, overloadGoal } from './fanout.ts';
import { flood } from './flood.ts';
import { history } from './history.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';
import { sends } from './sends.ts';
import { webhooks } from './webhooks.ts';
import { push } from './push.ts';
import { blocklist } from './blocklist.ts';
import { attachments } from './attachments.ts';
import { threads } from './threads.ts';
import { search } from './search.ts';

export type { ScenarioOptions, ScenarioOutput } from './options.ts';

const singleFanout = async (ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> => {
  const plan = {
    rooms: o.num('rooms', o.smoke ? 2 : 20),
    members: o.num('members', o.smoke ? 5 : 50),
    warmupMs: o.warmup * 1000,
    durationMs: o.seconds * 1000,
    p99LimitMs: o.num('p99', 50, false),
    startRate: o.num('start-rate', o.smoke ? 50 : 200),
    maxSteps: o.num('max-steps', o.smoke ? 3 : 14),
    overload: o.overload,
    ...(o.list('rate') ? { rate: o.num('rate', 0) } : {}),
  };
  const { rows, summary } = await fanout(ctx, plan);
  const chat = summary.chat;
  const ratios = withRatios(summary).ratios as Record<string, number | null>;
  const goal = chat
    ? {
        vsUws: { want: 0.6, got: ratios.chatVsuws ?? null, met: (ratios.chatVsuws ?? 0) >= 0.6 },
        vsSocketio: { want: 5, got: ratios.chatVssocketio ?? null, met: (ratios.chatVssocketio ?? 0) >= 5 },
        p99At70PctMs: { want: `< ${plan.p99LimitMs}`, got: chat.at70?.p99Ms ?? null, met: Number(chat.at70?.p99Ms ?? Infinity) < plan.p99LimitMs },
        overload: overloadGoal(chat, plan.p99LimitMs),
      }
    : undefined;
  return {
    parameters: { ...plan, workers: ctx.pool.size },
    rows,
    summary: { ...withRatios(summary), ...(goal ? { goal } : {}) },
    notes: [
      'Open loop: each message carries its intended send time, and latency is measured from it to its arrival at each member (no coordinated omission).',
      'This service persists every message (LMDB, group commit) before fanning it out; uws and socketio store nothing.',
      OVERLOAD_NOTE,
    ],
  };
};

/** Every scenario, in the order `all` runs them. */
export const SCENARIOS = {
  connections,
  fanout: singleFanout,
  sends,
  history,
  chatlist,
  flood,
  cluster,
  webhooks,
  push,
  blocklist,
  attachments,
  threads,
  search,
} satisfies Record<string, (ctx: Context, o: ScenarioOptions) => Promise<ScenarioOutput>>;

export type ScenarioName = keyof typeof SCENARIOS;
