import { readFileSync } from 'node:fs';
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
