import type { Row } from '../lib/output.ts';
import { processStats } from '../lib/process-stats.ts';
import { startSingle, type Target } from '../lib/targets.ts';
import type { ConnSpec } from '../load/systems.ts';
import { round, sleep, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';

/** Connections per user the service allows (node/realtime/limits.ts). */
const PER_USER = 16;

/**
 * N idle connections on one node of each system: this service's are authenticated (user JWTs,
 * 16 per user, its limit), each joined once its `ready` frame arrived. Measures the connect rate
 * and the server's resident memory per connection (after minus before, over N).
 */
export async function connections(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const n = o.num('connections', o.smoke ? 300 : 100_000);
  const addresses = o.num('addresses', Math.max(1, Math.ceil(n / 25_000)));
  const rows: Row[] = [];
  const summary: Record<string, unknown> = {};
  for (const system of ctx.systems) {
    ctx.progress.plan(3, `${system}: starting`);
    let target: Target | undefined;
    try {
      target = await startSingle(system, { users: system === 'chat' ? Math.ceil(n / PER_USER) : 0, nofile: n + 10_000 });
      ctx.progress.step();
      const conns: ConnSpec[] = Array.from({ length: n }, (_, i) => ({
        system,
        base: target!.nodes[0]!,
        room: `idle-${i % 1000}`,
        token: target!.app?.users[Math.floor(i / PER_USER)]!.jwt,
        localAddress: `127.0.0.${1 + (i % addresses)}`,
      }));
      await sleep(1000);
      const before = await processStats(target.pids);
      ctx.progress.stage(`${system}: opening ${n} connections`);
      const opened = await ctx.pool.open(conns, 100);
      ctx.progress.step();
      await sleep(o.smoke ? 500 : 3000);
      const after = await processStats(target.pids);
      const perConnection = opened.opened === 0 ? null : round((after.rssBytes - before.rssBytes) / opened.opened);
      const row: Row = {
        system,
        connections: opened.opened,
        failed: opened.failed,
        connectSeconds: round(opened.seconds, 2),
        connectsPerSecond: round(opened.opened / opened.seconds),
        rssBeforeMiB: round(before.rssBytes / 2 ** 20, 1),
        rssAfterMiB: round(after.rssBytes / 2 ** 20, 1),
        rssBytesPerConnection: perConnection,
      };
      rows.push(row);
      summary[system] = { connections: opened.opened, rssBytesPerConnection: perConnection, connectsPerSecond: row.connectsPerSecond, errors: opened.errors };
      ctx.log(`${system}: ${opened.opened}/${n} connections in ${row.connectSeconds} s, ${perConnection} B of server RSS each${opened.failed ? `; failures: ${JSON.stringify(opened.errors)}` : ''}`);
      ctx.progress.step();
    } finally {
      await ctx.pool.closeAll();
      await target?.stop();
    }
  }
  const chat = summary.chat as { connections: number; rssBytesPerConnection: number | null } | undefined;
  if (chat) summary.goal = { connections: 100_000, maxBytesPerConnection: 15 * 1024, met: chat.connections >= 100_000 && (chat.rssBytesPerConnection ?? Infinity) <= 15 * 1024 };
  return {
    parameters: { connections: n, sourceAddresses: addresses, workers: ctx.pool.size },
    rows,
    summary,
    notes: ['RSS per connection is (server RSS after all connected, settled 3 s) minus (before), over the connections opened; this service includes its control service in the same process, idle.'],
  };
}
