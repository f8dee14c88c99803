import { execFileSync } from 'node:child_process';
import type { Row } from '../lib/output.ts';
import { collectedStats, MEMORY_MEASURE_ARGS, openFileLimit } from '../lib/process-stats.ts';
import { startSingle, type Target } from '../lib/targets.ts';
import type { ConnSpec } from '../load/systems.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';

/** Connections per user the service allows (node/realtime/limits.ts). */
const PER_USER = 16;
/** Open files a server needs besides its sockets (store, listeners, logs). */
const FD_HEADROOM = 500;

/** Error counts of both halves, added up by kind. */
function summed(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
}

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
  // Each reading is of idle servers that collected their garbage (collectedStats), so the figure is
  // what the connections hold, not what setup left for the collector.
  const settle = o.smoke ? { rounds: 1, waitMs: 500 } : { rounds: 2, waitMs: 10_000 };
  const rows: Row[] = [];
  const summary: Record<string, unknown> = {};
  for (const system of ctx.systems) {
    ctx.progress.plan(3, `${system}: starting`);
    let target: Target | undefined;
    try {
      target = await startSingle(system, { users: system === 'chat' ? Math.ceil(n / PER_USER) : 0, nofile: n + FD_HEADROOM, profileDir: ctx.profileDir, nodeArgs: [...MEMORY_MEASURE_ARGS] });
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
      // Per connection is the slope between half and all of them: what setup left (the users'
      // provisioning, structures grown once) is in both readings, as it is not in a server's
      // steady state. The reading before any connection is kept for the whole-run figure.
      const before = await collectedStats(target.pids, settle);
      ctx.progress.stage(`${system}: opening ${n} connections`);
      const half = Math.floor(n / 2);
      const first = await ctx.pool.open(conns.slice(0, half), 100);
      const atHalf = await collectedStats(target.pids, settle);
      const second = await ctx.pool.open(conns.slice(half), 100);
      ctx.progress.step();
      const after = await collectedStats(target.pids, settle);
      const opened = { opened: first.opened + second.opened, failed: first.failed + second.failed, seconds: first.seconds + second.seconds, errors: summed(first.errors, second.errors) };
      const slope = second.opened === 0 ? null : round((after.rssBytes - atHalf.rssBytes) / second.opened);
      const heapPerConnection = opened.opened === 0 ? null : round((after.heapUsedBytes - before.heapUsedBytes) / opened.opened);
      // Over the same connections, resident memory cannot grow less than the live heap did (nor
      // shrink) unless the process was still giving back memory it held from before (V8 shrinks a
      // young generation grown during setup in steps, one per memory-reducer round): such a slope
      // measures that, not the connections, and is not given as the figure.
      const heapSlope = second.opened === 0 ? null : (after.heapUsedBytes - atHalf.heapUsedBytes) / second.opened;
      const settledRss = slope !== null && heapSlope !== null && slope > 0 && slope >= heapSlope;
      const perConnection = settledRss ? slope : null;
      if (!settledRss && slope !== null) notes.push(`${system}: its resident memory was still falling while the connections opened (${round(atHalf.rssBytes / 2 ** 20, 1)} -> ${round(after.rssBytes / 2 ** 20, 1)} MiB for the second half, a slope of ${slope} B per connection, below the live heap's ${round(heapSlope ?? 0)} B over the same half), so no RSS figure is given for it; its live heap per connection stands.`);
      const row: Row = {
        system,
        connections: opened.opened,
        failed: opened.failed,
        connectSeconds: round(opened.seconds, 2),
        connectsPerSecond: round(opened.opened / opened.seconds),
        rssBeforeMiB: round(before.rssBytes / 2 ** 20, 1),
        rssHalfMiB: round(atHalf.rssBytes / 2 ** 20, 1),
        rssAfterMiB: round(after.rssBytes / 2 ** 20, 1),
        rssBytesPerConnection: perConnection,
        rssSlopeBytes: slope,
        rssBytesPerConnectionFromStart: opened.opened === 0 ? null : round((after.rssBytes - before.rssBytes) / opened.opened),
        heapBytesPerConnection: heapPerConnection,
      };
      rows.push(row);
      summary[system] = { connections: opened.opened, rssBytesPerConnection: perConnection, heapBytesPerConnection: row.heapBytesPerConnection, connectsPerSecond: row.connectsPerSecond, errors: opened.errors };
      ctx.log(`${system}: ${opened.opened}/${n} connections in ${row.connectSeconds} s, ${perConnection ?? `unsettled (slope ${slope})`} B of server RSS each, ${heapPerConnection} B of live heap${opened.failed ? `; failures: ${JSON.stringify(opened.errors)}` : ''}`);
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
    notes: [...notes, `RSS per connection is (server RSS with all connected) minus (with half of them), over the second half: the slope, which leaves out what setup left behind; "from start" is (all) minus (before any) over all. Each reading is taken after the server ran full garbage collections and idled ${settle.rounds} × ${settle.waitMs / 1000} s (V8's memory reducer gives pages back then), the same for every system: all three are Node processes. This service includes its control service in the same process, idle.`],
  };
}
