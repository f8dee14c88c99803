import type { Row } from '../lib/output.ts';
import { processStats } from '../lib/process-stats.ts';
import { createGroups } from '../lib/provision.ts';
import { startSingle, type Target } from '../lib/targets.ts';
import type { ConnSpec } from '../load/systems.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';
import { mean, sendFigures } from './send-figures.ts';

const CONTENT = 'a benchmark message of a modest, realistic length';
const ENTRIES = 10_000;

/** A blocklist of `n` entries (words and two-word phrases) none of which the benchmark's messages contain. */
function entries(n: number): { text: string; action: 'block' | 'mask' }[] {
  return Array.from({ length: n }, (_, i) => ({ text: i % 3 === 0 ? `spam${i.toString(36)} offer` : `badword${i.toString(36)}`, action: i % 2 === 0 ? 'block' : 'mask' }));
}

async function setBlocklist(target: Target, list: { text: string; action: string }[]): Promise<void> {
  const res = await fetch(`${target.nodes[0]}/api/moderation/blocklist`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${target.app!.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ entries: list }),
  });
  if (!res.ok) throw new Error(`PUT blocklist: ${res.status} ${await res.text()}`);
}

/**
 * What an application's blocklist costs the send path: closed-loop WebSocket sends on one node (as
 * `sends`) with no blocklist and with one of 10,000 entries, alternating in the same run (`--rounds`
 * pairs) so the machine's drift falls on both. Every message is checked against the list (and none
 * matches it: the common case; a match refuses or masks the message).
 */
export async function blocklist(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const senders = o.num('senders', o.smoke ? 4 : 64);
  const window = o.num('window', o.smoke ? 4 : 16);
  const rounds = o.num('rounds', o.smoke ? 1 : 6);
  const size = o.num('entries', o.smoke ? 100 : ENTRIES);
  const seconds = o.seconds;
  const rows: Row[] = [];
  const byMode: Record<string, { acked: number[]; p99: number[] }> = { none: { acked: [], p99: [] }, list: { acked: [], p99: [] } };
  ctx.progress.plan(1 + rounds * 2, 'chat: starting');
  let target: Target | undefined;
  try {
    target = await startSingle('chat', { users: senders, profileDir: ctx.profileDir });
    const rooms = await createGroups(target.nodes[0]!, target.app!.users.map((u) => [u]));
    const conns: ConnSpec[] = rooms.map((room, i) => ({ system: 'chat', base: target!.nodes[0]!, room, token: target!.app!.users[i]!.jwt, sender: true }));
    const list = entries(size);
    ctx.progress.step();
    for (let round_ = 0; round_ < rounds; round_++) {
      for (const mode of ['none', 'list'] as const) {
        ctx.progress.stage(`chat: round ${round_ + 1}, ${mode === 'none' ? 'no blocklist' : `${size} entries`}`);
        await setBlocklist(target, mode === 'none' ? [] : list);
        const opened = await ctx.pool.open(conns);
        if (opened.failed) throw new Error(`${opened.failed} connections failed: ${JSON.stringify(opened.errors)}`);
        const before = await processStats(target.pids);
        const r = await ctx.pool.run({ op: 'sends', start: Date.now() + 300, warmupMs: o.warmup * 1000, durationMs: seconds * 1000, window, content: CONTENT, drainMs: 5000 });
        const after = await processStats(target.pids);
        await ctx.pool.closeAll();
        const row: Row = { system: 'chat', mode: mode === 'none' ? 'no blocklist' : `${size} entries`, round: round_ + 1, ...sendFigures(r, after.cpuSeconds - before.cpuSeconds, seconds), sendsAcked: r.acked };
        rows.push(row);
        byMode[mode]!.acked.push(Number(row.ackedPerSecond));
        byMode[mode]!.p99.push(Number(row.p99Ms));
        ctx.log(`round ${round_ + 1}, ${row.mode}: ${row.ackedPerSecond} acked sends/s, p99 ${row.p99Ms} ms, ${row.serverCpuUsPerSend} µs server CPU per send`);
        ctx.progress.step();
      }
    }
  } finally {
    await ctx.pool.closeAll();
    await target?.stop();
  }
  const sendsRatio = round(mean(byMode.list!.acked) / mean(byMode.none!.acked), 2);
  return {
    parameters: { senders, window, rounds, seconds, entries: size, workers: ctx.pool.size },
    rows,
    summary: {
      none: { ackedPerSecond: round(mean(byMode.none!.acked)), p99Ms: round(mean(byMode.none!.p99), 1) },
      list: { ackedPerSecond: round(mean(byMode.list!.acked)), p99Ms: round(mean(byMode.list!.p99), 1) },
      ratios: { sends: sendsRatio, p99: round(mean(byMode.list!.p99) / mean(byMode.none!.p99), 2) },
      goal: { want: `≥ 0.9× sends/s with ${size} entries`, got: sendsRatio, met: Number(sendsRatio) >= 0.9 },
    },
    notes: [
      'Closed-loop WebSocket sends, each acknowledged once durable; with the blocklist, each message is folded and scanned against it before it is stored (no message matches: the common case).',
      'Runs alternate between no blocklist and the list in the same run; ratios are of the means.',
    ],
  };
}
