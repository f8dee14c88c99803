import { parentPort, workerData } from 'node:worker_threads';
import { Agent, request } from 'undici';
import { lowerThreadPriority } from '../../common/threads/index.ts';
import { guardedLookup } from '../../common/webhooks/urls.ts';
import { HAND_OVER_EVERY_MS, WEB_PUSH_THREAD_NICE_STEP, type WebPushAnswer, type WebPushJob, type WebPushThreadOptions } from './web-push-thread.ts';
import { webPushRequest } from './web-push-request.ts';

/**
 * The Web Push thread (web-push-thread.ts): encrypts and POSTs the pushes the node hands it, at
 * most `inFlight` at a time over its own kept-open connections (names checked where they resolve,
 * as webhooks' are), the rest queued in order; each request's timeout starts when it is sent.
 */
const { allowLoopback, timeoutMs, inFlight } = workerData as WebPushThreadOptions;
lowerThreadPriority(WEB_PUSH_THREAD_NICE_STEP);
const agent = new Agent({ connections: inFlight, keepAliveTimeout: 30_000, connect: { lookup: guardedLookup(allowLoopback) as never } });
const queue: WebPushJob[] = [];
let head = 0;
let active = 0;
let answers: WebPushAnswer[] = [];

function answer(a: WebPushAnswer): void {
  if (answers.length === 0) {
    setTimeout(() => {
      const out = answers;
      answers = [];
      parentPort!.postMessage(out);
    }, HAND_OVER_EVERY_MS);
  }
  answers.push(a);
}

async function attempt(job: WebPushJob): Promise<WebPushAnswer> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  try {
    const req = webPushRequest(job.address, job.vapid, job.message);
    const res = await request(req.url, { method: 'POST', headers: req.headers, body: req.body, dispatcher: agent, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    const reason = res.statusCode >= 300 ? (await res.body.text()).slice(0, 200) : (await res.body.dump(), undefined);
    return { n: job.n, status: res.statusCode, ...(reason ? { reason } : {}), durationMs: took() };
  } catch (error) {
    return { n: job.n, reason: error instanceof Error ? `${error.name}: ${error.message}`.slice(0, 200) : String(error), durationMs: took() };
  }
}

function pump(): void {
  while (active < inFlight && head < queue.length) {
    const job = queue[head++]!;
    active++;
    void attempt(job).then((a) => {
      active--;
      answer(a);
      pump();
    });
  }
  if (head === queue.length) {
    queue.length = 0;
    head = 0;
  } else if (head > 1024 && head * 2 > queue.length) {
    queue.splice(0, head);
    head = 0;
  }
}

parentPort!.on('message', (batch: WebPushJob[]) => {
  for (const job of batch) queue.push(job);
  pump();
});
