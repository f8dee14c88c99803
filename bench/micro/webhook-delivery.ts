import { fork, type ChildProcess } from 'node:child_process';
import { Agent } from 'undici';
import { deliverPooled, deliveryPool, newWebhookSecret, signatureHeaders } from '../../common/webhooks/index.ts';

/**
 * CPU per webhook delivery of the nodes' delivery client (`deliverPooled`: undici's dispatcher
 * with a handler of its own), against undici's `request()` over the same kind of pool as the
 * baseline, alternating in one run; a loopback receiver in another process.
 *
 *   node --import tsx bench/micro/webhook-delivery.ts [--rounds N] [--seconds S] [--in-flight N]
 *
 * Prints, per round and client, deliveries/s, the client's CPU µs per delivery and the
 * receiver's, then the means and the ratio of the clients' CPU.
 */
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const rounds = arg('rounds', 4);
const seconds = arg('seconds', 3);
const inFlight = arg('in-flight', 64);

const receiver: ChildProcess = fork(new URL('./receiver.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
const ask = <T>(message: string, key: string): Promise<T> =>
  new Promise((resolve) => {
    const on = (m: Record<string, unknown>) => {
      if (!(key in m)) return;
      receiver.off('message', on);
      resolve(m[key] as T);
    };
    receiver.on('message', on);
    if (message) receiver.send(message);
  });
const port = await ask<number>('', 'port');
const url = `http://127.0.0.1:${port}/hooks`;
const secret = newWebhookSecret();
const body = JSON.stringify({
  type: 'message.new',
  id: 'evt_0000000000000000000000000000',
  timestamp: new Date().toISOString(),
  appId: 'app_bench',
  data: { id: 'msg_1', chatId: 'chat_1', senderId: 'user_1', content: 'a benchmark message of a modest, realistic length', seq: 12, rev: 1, createdAt: new Date().toISOString() },
});

// Eight connections, as a node's delivery thread keeps per receiving origin.
const pool = deliveryPool(true, 8);
const baselinePool = new Agent({ connections: 8, pipelining: 1, keepAliveTimeout: 30_000 });
let n = 0;
/** Each client resolves whether the receiver took the delivery (a 2xx). */
const clients: Record<string, () => Promise<boolean>> = {
  deliverPooled: async () => (await deliverPooled(pool, { url, secret, id: `evt_${n++}`, body, timeoutMs: 10_000, allowInsecure: true })).ok,
  'undici request()': async () => {
    const headers = { 'content-type': 'application/json', 'user-agent': 'chat-service-webhooks/1', ...signatureHeaders(secret, `evt_${n++}`, new Date(), body) };
    const res = await baselinePool.request({ origin: `http://127.0.0.1:${port}`, path: '/hooks', method: 'POST', headers, body });
    await res.body.dump({ limit: 64 * 1024 });
    return res.statusCode >= 200 && res.statusCode < 300;
  },
};

async function measure(send: () => Promise<boolean>, ms: number) {
  let done = 0;
  const end = Date.now() + ms;
  const receiverBefore = await ask<NodeJS.CpuUsage>('cpu', 'cpu');
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < end) {
        if (!(await send())) throw new Error('a delivery failed: the receiver did not answer 2xx');
        done++;
      }
    }),
  );
  const cpu = process.cpuUsage(before);
  const receiverAfter = await ask<NodeJS.CpuUsage>('cpu', 'cpu');
  const receiverUs = receiverAfter.user + receiverAfter.system - receiverBefore.user - receiverBefore.system;
  return { perSecond: Math.round(done / (ms / 1000)), clientUs: (cpu.user + cpu.system) / done, receiverUs: receiverUs / done };
}

const results: Record<string, { clientUs: number[]; receiverUs: number[] }> = {};
for (const send of Object.values(clients)) await measure(send, 1000);
for (let r = 1; r <= rounds; r++) {
  for (const [name, send] of Object.entries(clients)) {
    const m = await measure(send, seconds * 1000);
    (results[name] ??= { clientUs: [], receiverUs: [] }).clientUs.push(m.clientUs);
    results[name]!.receiverUs.push(m.receiverUs);
    console.log(`round ${r}, ${name}: ${m.perSecond} deliveries/s, client ${m.clientUs.toFixed(1)} µs CPU a delivery, receiver ${m.receiverUs.toFixed(1)}`);
  }
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const [ours, baseline] = Object.values(results).map((r) => mean(r.clientUs));
for (const [name, r] of Object.entries(results)) console.log(`${name}: client ${mean(r.clientUs).toFixed(1)} µs, receiver ${mean(r.receiverUs).toFixed(1)} µs a delivery (mean of ${rounds})`);
console.log(`deliverPooled ÷ undici request(): ${(ours! / baseline!).toFixed(2)}× the client CPU a delivery`);
receiver.send('exit');
await Promise.all([pool.close(), baselinePool.close()]);
