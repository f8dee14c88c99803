import { parentPort, workerData } from 'node:worker_threads';
import { deliverPooled, deliveryPool } from '../../common/webhooks/index.ts';
import type { AttemptRequest } from './delivery-thread.ts';

/**
 * The delivery thread: signs and POSTs what the node's lanes ask for, over its own kept-open
 * connections, and answers each request with its result. Requests and answers travel in batches
 * (one message per event-loop turn each way).
 */
const { allowInsecure, connections } = workerData as { allowInsecure: boolean; connections: number };
const pool = deliveryPool(allowInsecure, connections);
let answers: { n: number; result: Awaited<ReturnType<typeof deliverPooled>> }[] = [];
let flushing = false;

parentPort!.on('message', (batch: AttemptRequest[] | 'close') => {
  if (batch === 'close') {
    void pool.destroy().finally(() => parentPort!.close());
    return;
  }
  for (const { n, req } of batch) {
    void deliverPooled(pool, req).then((result) => {
      answers.push({ n, result });
      if (!flushing) {
        flushing = true;
        setImmediate(() => {
          flushing = false;
          const out = answers;
          answers = [];
          parentPort!.postMessage(out);
        });
      }
    });
  }
});
