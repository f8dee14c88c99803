import { execFileSync } from 'node:child_process';
import type { Row } from '../lib/output.ts';
import { openFileLimit, processStats } from '../lib/process-stats.ts';
import { startSingle, type Target } from '../lib/targets.ts';
import type { ConnSpec } from '../load/systems.ts';
import { round, sleep, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';

/** Connections per user the service allows (node/realtime/limits.ts). */
const PER_USER = 16;
/** Open files a server needs besides its sockets (store, listeners, logs). */
const FD_HEADROOM = 500;

/** Whether a child may get `nofile` open files (the hard limit can be raised: root with CAP_SYS_RESOURCE). */
function canRaise(nofile: number): boolean {
  try {
    execFileSync('/bin/sh', ['-c', `ulimit -Hn ${nofile}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * N idle connections on one node of each system: this service's are authenticated (user JWTs,
 * 16 per user, its limit), each joined once its `ready` frame arrived. Measures the connect rate
 * and the server's resident memory per connection (after minus before, over N).
 */
export async function connections(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const requested = o.num('connections', o.smoke ? 300 : 100_000);
  // A server process cannot hold more sockets than its open-file limit; where the machine does
  // not let it be raised (hard limit), the run is capped below it and says so.
  const limit = openFileLimit(process.pid);
  const raisable = limit === undefined || limit >= requested + FD_HEADROOM || canRaise(requested + FD_HEADROOM);
  const n = raisable ? requested : Math.max(1, limit! - FD_HEADROOM);
  const notes: string[] = [];
  if (n < requested) {
    const message = `blocked: ${requested} connections need ${requested + FD_HEADROOM} open files in the server process; this machine's hard limit is ${limit} per process and raising it is not permitted, so each system was measured at ${n}.`;
    notes.push(message);
    ctx.log(message);
  }
  const addresses = o.num('addresses', Math.max(1, Math.ceil(n / 25_000)));
  const rows: Row[] = [];
  const summary: Record<string, unknown> = {};
  for (const system of ctx.systems) {
    ctx.progress.plan(3, `${system}: starting`);
    let target: Target | undefined;
    try {
      target = await startSingle(system, { users: system === 'chat' ? Math.ceil(n / PER_USER) : 0, nofile: n + FD_HEADROOM, profileDir: ctx.profileDir });
      ctx.progress.step();
      const conns: ConnSpec[] = Array.from({ length: n }, (_, i) => ({
        system,
        base: target!.nodes[0]!,
        room: `idle-${i % 1000}`,
        token: target!.app?.users[Math.floor(i / PER_USER)]!.jwt,
        // Bound to a source address, a socket's port is picked without regard to the destination,
        // so ports still in TIME_WAIT from the previous system's run would clash: each system gets
        // addresses of its own. With one address the kernel picks ports per destination.
        localAddress: addresses > 1 ? `127.0.${1 + ctx.systems.indexOf(system)}.${1 + (i % addresses)}` : undefined,
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
  if (chat) summary.goal = { connections: 100_000, measuredAt: chat.connections, maxBytesPerConnection: 15 * 1024, met: chat.connections >= 100_000 && (chat.rssBytesPerConnection ?? Infinity) <= 15 * 1024 };
  return {
    parameters: { connections: n, requested, sourceAddresses: addresses, workers: ctx.pool.size },
    rows,
    summary,
    notes: [...notes, 'RSS per connection is (server RSS after all connected, settled 3 s) minus (before), over the connections opened; this service includes its control service in the same process, idle.'],
  };
}
