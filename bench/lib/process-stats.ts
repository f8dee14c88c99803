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
