import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '../../common/threads/index.ts';
import { deliverPooled, deliveryPool, type DeliveryResult } from '../../common/webhooks/index.ts';
import { CANCELLED, DELIVERY_THREAD_NICE_STEP, type Answers, type AttemptRequest, type ThreadMessage } from './delivery-thread.ts';

/**
 * The delivery thread: signs and POSTs what the node's lanes hand it, over its own kept-open
 * connections, at most `inFlight` requests at a time per lane (endpoint), the rest queued here in
 * order; each request's timeout starts when it is sent. Requests and answers travel in batches
 * (one message every 2 ms at most, each way). So a lane's window refills at this thread's pace,
 * not at the pace of the node's busy event loop.
 */
const { allowInsecure, connections, inFlight } = workerData as { allowInsecure: boolean; connections: number; inFlight: number };
lowerThreadPriority(DELIVERY_THREAD_NICE_STEP);
const pool = deliveryPool(allowInsecure, connections);
interface Held {
  n: number;
  req: AttemptRequest;
}
const lanes = new Map<string, { active: number; queue: Held[]; head: number }>();
/** How long answers gather before they go to the node's thread (they free a lane's window). */
const ANSWER_EVERY_MS = 2;
let ok: number[] = [];
let failed: Answers['failed'] = [];
let flushing = false;

function answer(n: number, result: DeliveryResult): void {
  if (result.ok && !result.error && result.body === undefined) {
    ok.push(n, result.statusCode ?? 200, result.durationMs);
  } else failed.push({ n, result });
  if (flushing) return;
  flushing = true;
  // Answers wait a little to go together: each message costs the node's busy thread a turn of its
  // own, and a turn of this thread ends after a few answers.
  setTimeout(() => {
    flushing = false;
    const out: Answers = { ok: Float64Array.from(ok), failed };
    ok = [];
    failed = [];
    parentPort!.postMessage(out);
  }, ANSWER_EVERY_MS);
}

function pump(key: string): void {
  const lane = lanes.get(key);
  if (!lane) return;
  while (lane.active < inFlight && lane.head < lane.queue.length) {
    const { n, req } = lane.queue[lane.head++]!;
    lane.active++;
    void deliverPooled(pool, req).then((result) => {
      lane.active--;
      answer(n, result);
      pump(key);
    });
  }
  if (lane.head === lane.queue.length) {
    lane.queue = [];
    lane.head = 0;
    if (lane.active === 0) lanes.delete(key);
  }
}

parentPort!.on('message', (message: ThreadMessage) => {
  if (message === 'close') {
    void pool.destroy().finally(() => parentPort!.close());
    return;
  }
  if ('cancel' in message) {
    const lane = lanes.get(message.cancel);
    if (!lane) return;
    for (const r of lane.queue.slice(lane.head)) answer(r.n, { ok: false, error: CANCELLED, durationMs: 0 });
    lane.queue = [];
    lane.head = 0;
    return;
  }
  const touched = new Set<string>();
  for (const g of message.groups) {
    let lane = lanes.get(g.lane);
    if (!lane) lanes.set(g.lane, (lane = { active: 0, queue: [], head: 0 }));
    let idAt = 0;
    let bodyAt = 0;
    for (let i = 0; i < g.idLengths.length; i++) {
      const id = g.ids.slice(idAt, (idAt += g.idLengths[i]!));
      const body = g.bodies.slice(bodyAt, (bodyAt += g.bodyLengths[i]!));
      lane.queue.push({ n: g.first + i, req: { url: g.url, secret: g.secret, id, body, timeoutMs: g.timeoutMs, allowInsecure: g.allowInsecure } });
    }
    touched.add(g.lane);
  }
  for (const key of touched) pump(key);
});
