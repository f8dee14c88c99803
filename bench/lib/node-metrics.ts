/**
 * Where this service's time goes, as its nodes see it: from their `/metrics` (Prometheus text),
 * read before and after a step. Counters of every node are summed.
 * - `chat_ack_latency_seconds`: from a write entering its chat's actor to it being durable (the
 *   wait for a batch, the batch's write, the writes queued before it);
 * - `chat_store_write_seconds`: one batch's write in the store;
 * - `nodejs_gc_duration_seconds`: garbage collections, during which a node's event loop stands
 *   still (a scavenge or the final pause of a mark-compact);
 * - `chat_sends_shed_total` and `chat_writes_refused_busy_total`: which of the node's bounds refused
 *   the sends refused with RATE_LIMITED (the node's load shedder, or a chat's queue);
 * - `chat_event_loop_busy_seconds_total`: how busy each node's one thread was (JavaScript and the
 *   system calls made from it, such as every socket write);
 * - `chat_store_transactions_total` and `chat_store_pages_written_total` (the embedded store only):
 *   the commits its single writer made, each synced to disk, and the pages they wrote.
 */
export interface NodeCounters {
  ackSum: number;
  ackCount: number;
  /** Cumulative counts by upper bound (seconds), as the histogram exposes them. */
  ackBuckets: Map<number, number>;
  writeSum: number;
  writeCount: number;
  gcSum: number;
  gcCount: number;
  /** Collections that took at most 10 ms (the histogram's bucket), of every kind. */
  gcUpTo10ms: number;
  shed: number;
  busy: number;
  loopBusySeconds: number;
  storeTransactions: number;
  storePages: number;
  /** Whether a node reported the embedded store's counters (none on Cassandra). */
  storeCounted: boolean;
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));

const empty = (): NodeCounters => ({ ackSum: 0, ackCount: 0, ackBuckets: new Map(), writeSum: 0, writeCount: 0, gcSum: 0, gcCount: 0, gcUpTo10ms: 0, shed: 0, busy: 0, loopBusySeconds: 0, storeTransactions: 0, storePages: 0, storeCounted: false });

/** The series summed as they are, each into its counter. */
const SUMMED: ReadonlyMap<string, Exclude<keyof NodeCounters, 'ackBuckets' | 'storeCounted'>> = new Map([
  ['chat_ack_latency_seconds_sum', 'ackSum'],
  ['chat_ack_latency_seconds_count', 'ackCount'],
  ['chat_store_write_seconds_sum', 'writeSum'],
  ['chat_store_write_seconds_count', 'writeCount'],
  ['nodejs_gc_duration_seconds_sum', 'gcSum'],
  ['nodejs_gc_duration_seconds_count', 'gcCount'],
  ['chat_sends_shed_total', 'shed'],
  ['chat_writes_refused_busy_total', 'busy'],
  ['chat_event_loop_busy_seconds_total', 'loopBusySeconds'],
  ['chat_store_transactions_total', 'storeTransactions'],
  ['chat_store_pages_written_total', 'storePages'],
]);

/** The counters of one `/metrics` text; series it does not have count as zero. */
export function parseNodeMetrics(text: string, into: NodeCounters = empty()): NodeCounters {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    if (space < 0) continue;
    const series = line.slice(0, space);
    const value = Number(line.slice(space + 1));
    if (!Number.isFinite(value)) continue;
    const name = series.split('{', 1)[0] ?? '';
    const le = /le="([^"]+)"/.exec(series)?.[1];
    if (name === 'chat_ack_latency_seconds_bucket') {
      const bound = le === '+Inf' ? Infinity : Number(le);
      into.ackBuckets.set(bound, (into.ackBuckets.get(bound) ?? 0) + value);
    } else if (name === 'nodejs_gc_duration_seconds_bucket') {
      if (le === '0.01') into.gcUpTo10ms += value;
    } else {
      const field = SUMMED.get(name);
      if (field) into[field] += value;
      if (name === 'chat_store_transactions_total') into.storeCounted = true;
    }
  }
  return into;
}

/** Every node's counters, summed; undefined when a node does not answer (the figures are left out). */
export async function readNodeCounters(nodeUrls: string[]): Promise<NodeCounters | undefined> {
  try {
    const texts = await Promise.all(
      nodeUrls.map(async (url) => {
        const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) });
        if (!res.ok) throw new Error(`${url}/metrics answered ${res.status}`);
        return res.text();
      }),
    );
    const sum = empty();
    for (const text of texts) parseNodeMetrics(text, sum);
    return sum;
  } catch {
    return undefined;
  }
}

/** A step's figures: the differences of the counters over `seconds` of `nodes` nodes. */
export function sendTimeParts(before: NodeCounters, after: NodeCounters, seconds: number, nodes: number): Record<string, number | null> {
  const acks = after.ackCount - before.ackCount;
  const writes = after.writeCount - before.writeCount;
  const gcs = after.gcCount - before.gcCount;
  // The histogram's percentile is only known to a bucket: the upper bound of the one holding it.
  let ackP99: number | null = null;
  if (acks > 0) {
    const bounds = [...after.ackBuckets.keys()].sort((a, b) => a - b);
    const bound = bounds.find((b) => (after.ackBuckets.get(b) ?? 0) - (before.ackBuckets.get(b) ?? 0) >= 0.99 * acks);
    ackP99 = bound === undefined || bound === Infinity ? null : round(bound * 1000, 1);
  }
  return {
    ackMeanMs: acks > 0 ? round(((after.ackSum - before.ackSum) * 1000) / acks, 1) : null,
    ackP99UpToMs: ackP99,
    storeWriteMeanMs: writes > 0 ? round(((after.writeSum - before.writeSum) * 1000) / writes, 1) : null,
    writesPerBatch: writes > 0 ? round(acks / writes, 1) : null,
    gcMsPerNodeSecond: seconds > 0 && nodes > 0 ? round(((after.gcSum - before.gcSum) * 1000) / seconds / nodes, 1) : null,
    gcPausesOver10Ms: gcs - (after.gcUpTo10ms - before.gcUpTo10ms),
    refusedNodeOverloaded: after.shed - before.shed,
    refusedChatBusy: after.busy - before.busy,
    eventLoopBusyPct: seconds > 0 && nodes > 0 && after.loopBusySeconds > 0 ? round(((after.loopBusySeconds - before.loopBusySeconds) * 100) / seconds / nodes, 1) : null,
    storeCommitsPerSecond: after.storeCounted && seconds > 0 && nodes > 0 ? round((after.storeTransactions - before.storeTransactions) / seconds / nodes, 1) : null,
    storePagesPerMessage: after.storeCounted && acks > 0 ? round((after.storePages - before.storePages) / acks, 2) : null,
  };
}
