import { readdir, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import type { DeliveryResult } from '../../common/webhooks/index.ts';
import { CANCELLED, DELIVERY_THREAD_NICE_STEP, DeliveryThread, type AttemptRequest, type DeliverySink } from '../../node/webhooks/delivery-thread.ts';

/** A receiver on loopback answering with `handle`, and a delivery thread; both stop when `t` ends. */
async function receiverAndThread(t: Test, handle: (req: IncomingMessage, res: ServerResponse) => void, options: { connections: number; inFlight: number }) {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const thread = new DeliveryThread({ allowInsecure: true, ...options });
  t.teardown(async () => {
    await thread.close();
    server.closeAllConnections();
    server.close();
  });
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, thread };
}

// The delivery thread (node/webhooks/delivery-thread.ts, delivery-worker.ts) against a real HTTP
// receiver: each lane's requests are sent at most `inFlight` at a time, the rest held in order;
// one lane's slow receiver never holds another's; a cancelled lane's held requests are dropped.
t.test('per lane at most inFlight requests at once, the rest held; lanes do not wait for each other; cancel drops what is held', async (t) => {
  const held: { path: string; res: ServerResponse }[] = [];
  const open = new Map<string, number>();
  const most = new Map<string, number>();
  const { base, thread } = await receiverAndThread(
    t,
    (req, res) => {
      req.resume();
      req.on('end', () => {
        const path = req.url!;
        open.set(path, (open.get(path) ?? 0) + 1);
        most.set(path, Math.max(most.get(path) ?? 0, open.get(path)!));
        res.on('finish', () => open.set(path, open.get(path)! - 1));
        if (path === '/slow') held.push({ path, res });
        else res.writeHead(204).end();
      });
    },
    { connections: 8, inFlight: 3 },
  );
  const deliver = (lane: string, r: AttemptRequest) => new Promise<DeliveryResult>((resolve) => thread.send(lane, r, resolve));
  const req = (path: string, i: number) => ({ url: `${base}${path}`, secret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=', id: `evt_${path.slice(1)}_${i}`, body: '{}', timeoutMs: 10_000, allowInsecure: true });

  const slow = Array.from({ length: 20 }, (_, i) => deliver('slow', req('/slow', i)));
  const fast = await Promise.all(Array.from({ length: 50 }, (_, i) => deliver('fast', req('/fast', i))));
  t.ok(fast.every((r) => r.ok), "another lane's 50 requests all delivered while the slow lane's receiver holds its requests");
  t.equal(held.length, 3, 'the slow lane: 3 sent, 17 held by the thread');
  t.ok((most.get('/fast') ?? 0) <= 3, `the fast lane never had more than 3 at once (${most.get('/fast')})`);

  held.shift()!.res.writeHead(204).end();
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.equal(held.length, 3, 'one answered: the next held one is sent');
  thread.cancel('slow');
  for (const h of held.splice(0)) h.res.writeHead(204).end();
  const results = await Promise.all(slow);
  t.equal(results.filter((r) => r.ok).length, 4, 'the 4 sent were delivered');
  t.ok(results.slice(4).every((r) => !r.ok && r.error === CANCELLED), 'the 16 still held were dropped unsent');
  t.equal(most.get('/slow'), 3, 'never more than 3 at once');
});

t.test('each request arrives with its own id and body, whatever their lengths and characters', async (t) => {
  const got = new Map<string, string>();
  const { base, thread } = await receiverAndThread(
    t,
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.set(String(req.headers['webhook-id']), Buffer.concat(chunks).toString('utf8'));
        res.writeHead(204).end();
      });
    },
    { connections: 4, inFlight: 4 },
  );
  const url = `${base}/`;
  const pieces = ['', 'a', 'ünïcödé', '\ud83d\ude00\ud83d\ude00', '"quoted"', 'x'.repeat(5000)];
  const sent = Array.from({ length: 60 }, (_, i) => ({ id: `evt_${'i'.repeat(i % 7)}${i}`, body: JSON.stringify({ i, text: pieces[i % pieces.length]!.repeat(1 + (i % 3)) }) }));
  const results = await Promise.all(
    sent.map(({ id, body }, i) => new Promise<DeliveryResult>((resolve) => thread.send(i % 2 ? 'a' : 'b', { url, secret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=', id, body, timeoutMs: 10_000, allowInsecure: true }, resolve))),
  );
  t.ok(results.every((r) => r.ok), 'all delivered');
  t.same(Object.fromEntries(got), Object.fromEntries(sent.map((s) => [s.id, s.body])), 'every id with its own body, byte for byte');
});

t.test('submit: one sink hears how each request ended, once, by its token', async (t) => {
  const { base, thread } = await receiverAndThread(
    t,
    (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(req.url === '/bad' ? 500 : 204).end());
    },
    { connections: 4, inFlight: 4 },
  );
  const heard: string[][] = Array.from({ length: 300 }, () => []);
  let answers = 0;
  let allHeard!: () => void;
  const all = new Promise<void>((resolve) => (allHeard = resolve));
  const hear = (i: number, what: string) => {
    heard[i]!.push(what);
    if (++answers === 300) allHeard();
  };
  const sink: DeliverySink<number> = {
    delivered: (i, statusCode, durationMs) => hear(i, `delivered ${statusCode}${durationMs >= 0 ? '' : ' (no time)'}`),
    failed: (i, result) => hear(i, `failed ${result.statusCode}`),
  };
  // Three lanes, requests interleaved: every hand-over holds groups of each.
  for (let i = 0; i < 300; i++) thread.submit(`lane-${i % 3}`, `${base}/${i % 7 === 0 ? 'bad' : 'ok'}`, 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=', 10_000, true, `evt_${i}`, '{}', sink, i);
  await Promise.race([all, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
  t.same(
    heard,
    heard.map((_, i) => [i % 7 === 0 ? 'failed 500' : 'delivered 204']),
    'each token heard once, with its own outcome',
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(answers, 300, 'and nothing heard twice');
});

/** The nice value of each of this process's threads, by thread id (Linux: /proc/self/task). */
async function threadNices(): Promise<Map<number, number>> {
  const nices = new Map<number, number>();
  for (const tid of await readdir('/proc/self/task')) {
    const stat = await readFile(`/proc/self/task/${tid}/stat`, 'utf8').catch(() => undefined);
    // Fields after the command name (which may hold spaces and parentheses): state is field 3, nice 19.
    if (stat) nices.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return nices;
}

t.test('the thread runs at a lower CPU priority than the node: under contention, the event loop comes first', async (t) => {
  const before = await threadNices();
  const want = Math.min(19, before.get(process.pid)! + DELIVERY_THREAD_NICE_STEP);
  const thread = new DeliveryThread({ allowInsecure: true, connections: 1, inFlight: 1 });
  t.teardown(() => thread.close());
  let lowered: number[] = [];
  for (let i = 0; i < 200 && lowered.length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    lowered = [...(await threadNices())].filter(([tid, nice]) => !before.has(tid) && nice === want).map(([tid]) => tid);
  }
  t.equal(lowered.length, 1, `one new thread at nice ${want}, ${DELIVERY_THREAD_NICE_STEP} below the node's ${before.get(process.pid)}`);
  t.equal((await threadNices()).get(process.pid), before.get(process.pid), "the node's own thread keeps its priority");
});
