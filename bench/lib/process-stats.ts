import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pidusage from 'pidusage';

export interface ProcessStats {
  /** CPU seconds used so far (user + system), summed over the processes. */
  cpuSeconds: number;
  /** Resident memory in bytes, summed over the processes. */
  rssBytes: number;
}

/** CPU time and resident memory of server processes, read from the OS. */
export async function processStats(pids: number[]): Promise<ProcessStats> {
  const stats = await Promise.all(pids.map((pid) => pidusage(pid)));
  pidusage.clear();
  return { cpuSeconds: stats.reduce((a, s) => a + s.ctime / 1000, 0), rssBytes: stats.reduce((a, s) => a + s.memory, 0) };
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
