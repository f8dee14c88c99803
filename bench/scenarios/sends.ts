import { percentiles } from '../lib/histogram.ts';
import { readNodeCounters } from '../lib/node-metrics.ts';
import type { Row } from '../lib/output.ts';
import { processStats } from '../lib/process-stats.ts';
import { createGroups } from '../lib/provision.ts';
import { startSingle, type Target } from '../lib/targets.ts';
import type { ConnSpec } from '../load/systems.ts';
import { PROTOCOLS } from '../load/systems.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';
import { attachments } from './attachments.ts';
import { push } from './push.ts';

const CONTENT = 'a benchmark message of a modest, realistic length';

/**
 * Closed-loop sends on one node: S senders, each in a chat (room) of its own, over WebSocket
 * (W in flight each, acked once durable) and over HTTP (N requests in flight in total, answered
 * 201 once durable). This service persists every message to its embedded store before the ack;
 * the peers acknowledge without storing.
 */
export async function sends(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  // `--push web-push`: every recipient offline, without push and with Web Push (push.ts).
  if (o.list('push')?.includes('web-push')) return push(ctx, o);
  // `--attachments 1`: sends without and with one finalized attachment each (attachments.ts).
  if (o.num('attachments', 0) > 0) return attachments(ctx, o);
  const senders = o.num('senders', o.smoke ? 4 : 64);
  const window = o.num('window', o.smoke ? 4 : 16);
  const concurrency = o.num('concurrency', o.smoke ? 4 : 64);
  const transports = o.list('transports') ?? ['ws', 'http'];
  const rows: Row[] = [];
  const summary: Record<string, Record<string, unknown>> = {};
  const seconds = o.seconds;
  for (const system of ctx.systems) {
    ctx.progress.plan(1 + transports.length, `${system}: starting`);
    let target: Target | undefined;
    try {
      target = await startSingle(system, { users: senders, profileDir: ctx.profileDir });
      const rooms = system === 'chat' ? await createGroups(target.nodes[0]!, target.app!.users.map((u) => [u])) : Array.from({ length: senders }, (_, i) => `room-${i}`);
      const conns: ConnSpec[] = rooms.map((room, i) => ({ system, base: target!.nodes[0]!, room, token: target!.app?.users[i]!.jwt, sender: true }));
      ctx.progress.step();
      for (const transport of transports) {
        ctx.progress.stage(`${system}: sends over ${transport}`);
        const timing = () => ({ start: Date.now() + 300, warmupMs: o.warmup * 1000, durationMs: seconds * 1000 });
        let r;
        let before;
        // This service's own counts of which bound refused a send (the peers refuse none).
        const refusals = () => (system === 'chat' ? readNodeCounters(target!.nodes) : Promise.resolve(undefined));
        const refusedBefore = await refusals();
        if (transport === 'ws') {
          const opened = await ctx.pool.open(conns);
          if (opened.failed) throw new Error(`${system}: ${opened.failed} connections failed: ${JSON.stringify(opened.errors)}`);
          before = await processStats(target.pids);
          r = await ctx.pool.run({ op: 'sends', ...timing(), window, content: CONTENT, drainMs: 5000 });
          await ctx.pool.closeAll();
        } else {
          before = await processStats(target.pids);
          const requests = conns.map((c) => {
            const { path, headers } = PROTOCOLS[system].httpSend(c);
            return { origin: c.base, method: 'POST' as const, path, headers, body: JSON.stringify({ content: CONTENT }) };
          });
          const share = Math.max(1, Math.round(concurrency / ctx.pool.size));
          const shareOf = (i: number) => {
            const mine = requests.filter((_, k) => k % ctx.pool.size === i);
            return mine.length > 0 ? mine : requests;
          };
          const at = timing();
          r = await ctx.pool.run((i) => ({ op: 'http', ...at, requests: shareOf(i), concurrency: share }));
        }
        const after = await processStats(target.pids);
        const refusedAfter = await refusals();
        const wall = o.warmup + seconds;
        const p = percentiles(r.histogram);
        const row: Row = {
          system,
          transport,
          ackedPerSecond: round(r.measuredDelivered / seconds),
          p50Ms: p.p50Ms,
          p99Ms: p.p99Ms,
          p999Ms: p.p999Ms,
          errors: r.errors,
          ...(refusedBefore && refusedAfter ? { shedByNode: refusedAfter.shed - refusedBefore.shed, refusedChatBusy: refusedAfter.busy - refusedBefore.busy } : {}),
          serverCpuUsPerSend: r.acked === 0 ? null : round(((after.cpuSeconds - before.cpuSeconds) * 1e6) / r.acked, 1),
          serverCpuCores: round((after.cpuSeconds - before.cpuSeconds) / wall, 2),
          generatorCpuCores: round(r.generatorCpuSeconds / wall, 2),
        };
        if (r.errors) ctx.log(`${system} ${transport}: ${r.errors} errors ${JSON.stringify({ ...r.statuses, ...r.refused })}${row.shedByNode === undefined ? '' : `; the node's load shedder refused ${row.shedByNode}, busy chats ${row.refusedChatBusy}`}`);
        rows.push(row);
        (summary[system] ??= {})[transport] = row.ackedPerSecond;
        ctx.log(`${system} over ${transport}: ${row.ackedPerSecond} acked sends/s, p99 ${row.p99Ms} ms, server ${row.serverCpuCores} cores, generator ${row.generatorCpuCores} cores`);
        ctx.progress.step();
      }
    } finally {
      await ctx.pool.closeAll();
      await target?.stop();
    }
  }
  const chat = summary.chat;
  const goal = chat ? { persistedPerSecond: 30_000, met: Math.max(Number(chat.ws ?? 0), Number(chat.http ?? 0)) >= 30_000 } : undefined;
  return {
    parameters: { senders, window, httpConcurrency: concurrency, transports, seconds, workers: ctx.pool.size },
    rows,
    summary: { ...summary, ...(goal ? { goal } : {}) },
    notes: ['This service acks a send once it is written to LMDB (group commit per chat); uws and socketio ack on receipt and store nothing.'],
  };
}
