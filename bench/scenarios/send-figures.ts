import { percentiles } from '../lib/histogram.ts';
import type { Merged } from '../load/pool.ts';
import { round } from './context.ts';

/** The figures of one closed-loop `sends` run: acked sends per second, latency and server CPU per acked send. */
export function sendFigures(r: Merged, cpuSeconds: number, seconds: number) {
  const p = percentiles(r.histogram);
  return {
    ackedPerSecond: round(r.measuredDelivered / seconds),
    p50Ms: p.p50Ms,
    p99Ms: p.p99Ms,
    errors: r.errors,
    serverCpuUsPerSend: r.acked === 0 ? null : round((cpuSeconds * 1e6) / r.acked, 1),
  };
}

export const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
