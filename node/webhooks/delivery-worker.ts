import { parentPort, workerData } from 'node:worker_threads';
import { deliverPooled, deliveryPool, type DeliveryResult } from '../../common/webhooks/index.ts';
import { CANCELLED, type AttemptRequest, type ThreadMessage } from './delivery-thread.ts';

/**
 * The delivery thread: signs and POSTs what the node's lanes hand it, over its own kept-open
 * connections, at most `inFlight` requests at a time per lane (endpoint), the rest queued here in
 * order; each request's timeout starts when it is sent. Requests and answers travel in batches
 * (one message per event-loop turn each way). So a lane's window refills at this thread's pace,
 * not at the pace of the node's busy event loop.
 */
const { allowInsecure, connections, inFlight } = workerData as { allowInsecure: boolean; connections: number; inFlight: number };
const pool = deliveryPool(allowInsecure, connections);
const lanes = new Map<string, { active: number; queue: AttemptRequest[]; head: number }>();
let answers: { n: number; result: DeliveryResult }[] = [];
let flushing = false;

function answer(n: number, result: DeliveryResult): void {
  answers.push({ n, result });
  if (flushing) return;
  flushing = true;
  setImmediate(() => {
    flushing = false;
    const out = answers;
    answers = [];
    parentPort!.postMessage(out);
  });
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
  for (const r of message.batch) {
    let lane = lanes.get(r.lane);
    if (!lane) lanes.set(r.lane, (lane = { active: 0, queue: [], head: 0 }));
    lane.queue.push(r);
    touched.add(r.lane);
  }
  for (const key of touched) pump(key);
});
