import { spawn, type ChildProcess } from 'node:child_process';
import { nodeScript, withOpenFileLimit } from '../../bin/spawn.ts';
import { mergeHistograms, type Histogram } from '../lib/histogram.ts';
import type { Command, Opened, WorkerResult } from './commands.ts';
import type { ConnSpec } from './systems.ts';

export interface Merged {
  sent: number;
  measuredSent: number;
  delivered: number;
  measuredDelivered: number;
  acked: number;
  measuredAcked: number;
  errors: number;
  /** Measured sends refused, by the error's code. */
  refused: Record<string, number>;
  /** Time from a measured send to its refusal (µs). */
  refusalHistogram: Histogram;
  /** Measured sends with no answer by the end of the drain. */
  unanswered: number;
  /** How late measured sends left the generator after their intended time (µs): its own lag. */
  sendLagHistogram: Histogram;
  ids: string[];
  statuses: Record<string, number>;
  histogram: Histogram;
  /** CPU seconds of all generator processes during the phase. */
  generatorCpuSeconds: number;
  open: number;
}

/**
 * The load generator: `size` processes (so it uses every core the server leaves it, and no single
 * event loop caps it), each with a raised open-file limit. Connections are dealt round-robin.
 */
export class LoadPool {
  private constructor(private readonly workers: ChildProcess[]) {}

  static async start(size: number, nofile = 200_000): Promise<LoadPool> {
    const workers = await Promise.all(
      Array.from({ length: size }, async () => {
        const [command, args] = withOpenFileLimit(nofile, process.execPath, nodeScript('bench/load/worker.ts'));
        const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
        await new Promise<void>((resolve, reject) => {
          child.once('message', () => resolve());
          child.once('exit', (code) => reject(new Error(`load generator process exited with ${code}`)));
        });
        return child;
      }),
    );
    return new LoadPool(workers);
  }

  get size(): number {
    return this.workers.length;
  }

  private ask<T>(child: ChildProcess, cmd: Command): Promise<T> {
    return new Promise((resolve, reject) => {
      const onMessage = (m: { op: string; error?: string }) => {
        child.off('exit', onExit);
        if (m.op === 'failed') reject(new Error(`load generator: ${m.error}`));
        else resolve(m as T);
      };
      const onExit = (code: number | null) => reject(new Error(`load generator process exited with ${code}`));
      child.once('message', onMessage);
      child.once('exit', onExit);
      child.send(cmd);
    });
  }

  /** Opens the connections, dealt round-robin, `concurrency` at a time per process. */
  async open(conns: ConnSpec[], concurrency = 64): Promise<{ opened: number; failed: number; errors: Record<string, number>; seconds: number }> {
    const shares = this.workers.map((_, i) => conns.filter((_, k) => k % this.workers.length === i));
    const started = performance.now();
    const answers = await Promise.all(this.workers.map((w, i) => this.ask<Opened>(w, { op: 'open', conns: shares[i]!, concurrency })));
    const errors: Record<string, number> = {};
    for (const a of answers) for (const [k, v] of Object.entries(a.errors)) errors[k] = (errors[k] ?? 0) + v;
    return { opened: sum(answers.map((a) => a.opened)), failed: sum(answers.map((a) => a.failed)), errors, seconds: (performance.now() - started) / 1000 };
  }

  /** Runs one phase in every process; `perWorker` may vary the command by process. */
  async run(cmd: Command | ((i: number) => Command)): Promise<Merged> {
    const answers = await Promise.all(this.workers.map((w, i) => this.ask<WorkerResult>(w, typeof cmd === 'function' ? cmd(i) : cmd)));
    const statuses = addUp(answers.map((a) => a.statuses ?? {}));
    return {
      sent: sum(answers.map((a) => a.sent)),
      measuredSent: sum(answers.map((a) => a.measuredSent)),
      delivered: sum(answers.map((a) => a.delivered)),
      measuredDelivered: sum(answers.map((a) => a.measuredDelivered)),
      acked: sum(answers.map((a) => a.acked)),
      measuredAcked: sum(answers.map((a) => a.measuredAcked)),
      errors: sum(answers.map((a) => a.errors)),
      refused: addUp(answers.map((a) => a.refused)),
      refusalHistogram: mergeHistograms(answers.map((a) => a.refusalHistogram)),
      unanswered: sum(answers.map((a) => a.unanswered)),
      sendLagHistogram: mergeHistograms(answers.map((a) => a.sendLagHistogram)),
      ids: answers.flatMap((a) => a.ids),
      statuses,
      histogram: mergeHistograms(answers.map((a) => a.histogram)),
      generatorCpuSeconds: sum(answers.map((a) => a.cpuSeconds)),
      open: sum(answers.map((a) => a.open)),
    };
  }

  /** Closes every connection (the processes stay for the next system). */
  async closeAll(): Promise<void> {
    await Promise.all(this.workers.map((w) => this.ask(w, { op: 'close' })));
  }

  stop(): void {
    for (const w of this.workers) if (w.exitCode === null) w.kill('SIGKILL');
  }
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Counts by name, added up over the processes. */
function addUp(counts: Record<string, number>[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const c of counts) for (const [k, v] of Object.entries(c)) total[k] = (total[k] ?? 0) + v;
  return total;
}
