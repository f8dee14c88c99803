import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * Lowers the calling thread's scheduling priority by `step` nice levels (Linux: a thread is a task
 * of its own, named by /proc/thread-self), so background work (webhook deliveries, pushes) takes
 * the CPU the node's event loop leaves. Elsewhere (no /proc/thread-self) the thread keeps the
 * node's priority.
 */
export function lowerThreadPriority(step: number): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0 && tid !== process.pid) setPriority(tid, Math.min(19, getPriority(tid) + step));
  } catch {
    // Not Linux: the node's priority.
  }
}

/**
 * Starts a worker thread from its compiled file when the service runs compiled (`built`, defined
 * by bin/build-service.ts), else from its TypeScript source `entry` through tsx, whose loader is
 * per thread: the worker registers it before loading its module.
 */
export function startWorker(built: string | undefined, entry: URL, workerData: unknown): Worker {
  if (typeof built === 'string') return new Worker(new URL(built), { workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}
