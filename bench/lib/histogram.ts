import * as hdr from 'hdr-histogram-js';

/** Latencies are recorded in microseconds; 3 significant digits, growing past any bound. */
export type Histogram = hdr.Histogram;

export const newHistogram = (): Histogram =>
  hdr.build({ bitBucketSize: 32, autoResize: true, lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3, useWebAssembly: false });

/** A histogram as text, to cross from a generator process to the parent. */
export const encodeHistogram = (h: Histogram): string => hdr.encodeIntoCompressedBase64(h);

/** The sum of encoded histograms. */
export function mergeHistograms(encoded: string[]): Histogram {
  const total = newHistogram();
  for (const text of encoded) if (text) total.add(hdr.decodeFromCompressedBase64(text, 32, false));
  return total;
}

export interface Percentiles {
  count: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

const ms = (us: number) => Math.round(us) / 1000;

export const percentiles = (h: Histogram): Percentiles => ({
  count: h.totalCount,
  p50Ms: ms(h.getValueAtPercentile(50)),
  p99Ms: ms(h.getValueAtPercentile(99)),
  p999Ms: ms(h.getValueAtPercentile(99.9)),
  maxMs: ms(h.maxValue),
});
