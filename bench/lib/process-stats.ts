import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pidusage from 'pidusage';

export interface ProcessStats {
  /** CPU seconds used so far (user + system), summed over the processes. */
  cpuSeconds: number;
  /**
   * Of those, the seconds spent in the kernel on the processes' behalf (system time: socket
   * writes and reads, fsync), summed; undefined where /proc does not say (not Linux).
   */
  systemCpuSeconds: number | undefined;
  /** Resident memory in bytes, summed over the processes. */
  rssBytes: number;
}

/** CPU time and resident memory of server processes, read from the OS. */
export async function processStats(pids: number[]): Promise<ProcessStats> {
  const stats = await Promise.all(pids.map((pid) => pidusage(pid)));
  pidusage.clear();
  const system = pids.map(systemSeconds);
  return {
    cpuSeconds: stats.reduce((a, s) => a + s.ctime / 1000, 0),
    systemCpuSeconds: system.every((s) => s !== undefined) ? system.reduce((a: number, s) => a + s!, 0) : undefined,
    rssBytes: stats.reduce((a, s) => a + s.memory, 0),
  };
}

/** A process's system time so far (all its threads), from /proc/PID/stat (field 15, in clock ticks of 1/100 s). */
function systemSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: fields are counted after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / 100 : undefined;
  } catch {
    return undefined;
  }
}

/** A process's soft limit on open files (Linux; undefined elsewhere): how many sockets it can hold. */
export function openFileLimit(pid: number): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/limits`, 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    return Number.isFinite(soft) ? soft : undefined;
  } catch {
    return undefined;
  }
}

/** Node flags that make a server collect its garbage on SIGUSR2 (bench/lib/gc-on-signal.mjs), for collectedStats. */
export const MEMORY_MEASURE_ARGS: readonly string[] = ['--expose-gc', '--import', new URL('./gc-on-signal.mjs', import.meta.url).pathname];

export interface CollectedStats extends ProcessStats {
  /** Bytes of live JavaScript objects after the last collection (V8's heapUsed), summed over the processes. */
  heapUsedBytes: number;
}

/**
 * processStats of idle servers started with MEMORY_MEASURE_ARGS, after full garbage collections,
 * with the bytes their live JavaScript objects take. A full collection alone frees little resident
 * memory: V8 gives pages back (and shrinks a young generation grown during setup) in its memory
 * reducer, about 8 s after a full collection when the process allocates little. So each round
 * collects and then waits `waitMs` for that.
 */
export async function collectedStats(pids: number[], o: { rounds: number; waitMs: number } = { rounds: 2, waitMs: 10_000 }): Promise<CollectedStats> {
  const reports = pids.map((pid) => join(tmpdir(), `gc-report-${pid}.json`));
  for (let round = 0; round < o.rounds; round++) {
    for (const file of reports) rmSync(file, { force: true });
    for (const pid of pids) process.kill(pid, 'SIGUSR2');
    await new Promise((resolve) => setTimeout(resolve, o.waitMs));
    // A busy machine may take longer than waitMs to run the collection: its report says it did.
    for (let waited = 0; !reports.every((file) => existsSync(file)); waited += 100) {
      if (waited >= 30_000) throw new Error(`no garbage-collection report from ${pids.join(', ')} after 30 s: were they started with MEMORY_MEASURE_ARGS?`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const heapUsedBytes = reports.reduce((n, file) => n + (JSON.parse(readFileSync(file, 'utf8')) as { heapUsed: number }).heapUsed, 0);
  for (const file of reports) rmSync(file, { force: true });
  return { ...(await processStats(pids)), heapUsedBytes };
}
