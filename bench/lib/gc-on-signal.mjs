// Loaded by the benchmarks only (`node --expose-gc --import <this file>`), into every server they
// measure for memory: on SIGUSR2 the process runs a full, memory-reducing garbage collection and
// writes what its heap then holds (process.memoryUsage()) to gc-report-<pid>.json in the system's
// temporary directory, for bench/lib/process-stats.ts's collectedStats. Plain JavaScript: it loads
// before tsx.
import { renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

if (typeof globalThis.gc !== 'function') throw new Error('gc-on-signal.mjs needs node --expose-gc');
process.on('SIGUSR2', () => {
  globalThis.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  // Written whole under another name and renamed, so a reader never sees it half written.
  const file = join(tmpdir(), `gc-report-${process.pid}.json`);
  writeFileSync(`${file}.part`, JSON.stringify(process.memoryUsage()));
  renameSync(`${file}.part`, file);
});
