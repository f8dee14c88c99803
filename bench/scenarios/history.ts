import { percentiles } from '../lib/histogram.ts';
import type { Row } from '../lib/output.ts';
import { createGroups } from '../lib/provision.ts';
import { startSingle, type Target } from '../lib/targets.ts';
import type { ConnSpec } from '../load/systems.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';

const SEEDERS = 8;

/**
 * getMessages at several history depths on one node of this service (the peers keep no history).
 * Each depth gets a chat filled through the WebSocket API (8 members sending, acked once durable),
 * then two closed-loop runs: the newest page, and pages at cursors spread over the whole history.
 */
export async function history(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const depths = (o.list('depths') ?? (o.smoke ? ['100', '1000'] : ['1000', '100000', '1000000'])).map(Number);
  if (depths.some((d) => !Number.isInteger(d) || d < SEEDERS)) throw new Error(`--depths must be integers of at least ${SEEDERS}`);
  const page = o.num('page', 50);
  const concurrency = o.num('concurrency', o.smoke ? 4 : 16);
  const rows: Row[] = [];
  const notes = ['The peers keep no history, so this table compares depths with each other: the ratio column is against the smallest depth.'];
  if (!ctx.systems.includes('chat')) return { parameters: { depths }, rows, summary: {}, notes: [...notes, 'skipped: --systems does not include chat'] };
  ctx.progress.plan(1 + depths.length * 3, 'chat: starting');
  let target: Target | undefined;
  try {
    target = await startSingle('chat', { users: SEEDERS, profileDir: ctx.profileDir });
    const users = target.app!.users;
    ctx.progress.step();
    for (const depth of depths) {
      const [chatId] = await createGroups(target.nodes[0]!, [users]);
      const conns: ConnSpec[] = users.map((u) => ({ system: 'chat', base: target!.nodes[0]!, room: chatId!, token: u.jwt, sender: true }));
      ctx.progress.stage(`chat: filling a chat with ${depth} messages`);
      const opened = await ctx.pool.open(conns);
      if (opened.failed) throw new Error(`${opened.failed} connections failed: ${JSON.stringify(opened.errors)}`);
      const wanted = Math.ceil(depth / SEEDERS) * SEEDERS;
      const t0 = performance.now();
      // The fill is not measured: sends refused on a busy machine (the chat's queue full, a
      // database timeout) are sent again, in up to five rounds of what is still missing.
      const seeded = { acked: 0, errors: 0, ids: [] as string[] };
      for (let attempt = 1; seeded.acked < wanted && attempt <= 5; attempt++) {
        const perSender = Math.ceil((wanted - seeded.acked) / SEEDERS);
        const r = await ctx.pool.run({ op: 'sends', start: Date.now() + 100, warmupMs: 0, durationMs: 3_600_000, window: 64, content: 'history', drainMs: 10_000, perSender, collectIdsEvery: Math.max(1, Math.floor(depth / 400)) });
        seeded.acked += r.acked;
        seeded.errors += r.errors;
        seeded.ids.push(...r.ids);
        if (r.errors) ctx.log(`depth ${depth}: fill round ${attempt}: ${r.errors} sends refused ${JSON.stringify(r.refused)}, sent again`);
      }
      const fillSeconds = (performance.now() - t0) / 1000;
      await ctx.pool.closeAll();
      if (seeded.acked < wanted) throw new Error(`filling: ${seeded.acked} of ${wanted} sends acked after five rounds (${seeded.errors} errors)`);
      ctx.log(`depth ${depth}: filled in ${round(fillSeconds, 1)} s (${round(seeded.acked / fillSeconds)} acked sends/s into one chat)`);
      ctx.progress.step();
      const base = { origin: target.nodes[0]!, method: 'GET' as const, headers: { authorization: `Bearer ${users[0]!.jwt}` } };
      const kinds = {
        newest: [{ ...base, path: `/api/messages/getMessages/${chatId}?size=${page}` }],
        anywhere: seeded.ids.map((id) => ({ ...base, path: `/api/messages/getMessages/${chatId}?size=${page}&lastMessage=${id}` })),
      };
      for (const [kind, requests] of Object.entries(kinds)) {
        ctx.progress.stage(`chat: depth ${depth}, ${kind} page`);
        const share = Math.max(1, Math.round(concurrency / ctx.pool.size));
        const r = await ctx.pool.run({ op: 'http', start: Date.now() + 200, warmupMs: o.warmup * 1000, durationMs: o.seconds * 1000, requests: requests.sort(() => Math.random() - 0.5), concurrency: share });
        const p = percentiles(r.histogram);
        rows.push({ system: 'chat', depth, page: kind, fillSendsPerSecond: round(seeded.acked / fillSeconds), requestsPerSecond: round(r.measuredDelivered / o.seconds), p50Ms: p.p50Ms, p99Ms: p.p99Ms, p999Ms: p.p999Ms, errors: r.errors, generatorCpuCores: round(r.generatorCpuSeconds / (o.seconds + o.warmup), 2) });
        if (r.errors) ctx.log(`depth ${depth} ${kind}: ${r.errors} errors ${JSON.stringify(r.statuses)}`);
        ctx.progress.step();
      }
    }
  } finally {
    await ctx.pool.closeAll();
    await target?.stop();
  }
  // Each depth against the smallest, per kind of page.
  const summary: Record<string, unknown> = {};
  for (const kind of ['newest', 'anywhere']) {
    const of = rows.filter((r) => r.page === kind);
    const first = of[0];
    for (const r of of) {
      r.throughputVsSmallest = first ? round(Number(r.requestsPerSecond) / Number(first.requestsPerSecond), 3) : null;
      r.p50VsSmallest = first ? round(Number(r.p50Ms) / Number(first.p50Ms), 3) : null;
    }
    const last = of[of.length - 1];
    if (first && last) summary[kind] = { smallest: first.depth, deepest: last.depth, p50Ratio: last.p50VsSmallest, throughputRatio: last.throughputVsSmallest };
  }
  const worst = Math.max(...['newest', 'anywhere'].map((k) => {
    const s = summary[k] as { p50Ratio: number; throughputRatio: number } | undefined;
    return s ? Math.max(s.p50Ratio, 1 / s.throughputRatio) : Infinity;
  }));
  summary.goal = { deepestWithin: 1.2, worstRatio: round(worst, 3), met: worst <= 1.2 };
  return { parameters: { depths, page, concurrency, seconds: o.seconds, workers: ctx.pool.size }, rows, summary, notes };
}
