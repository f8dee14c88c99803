import { execFile } from 'node:child_process';
import t from 'tap';

const SCRIPT = new URL('../../bench/micro/webhook-delivery.ts', import.meta.url).pathname;

// The micro benchmark runs as documented (README, "Benchmarks"), so it never rots: every
// delivery it counts was answered, and it reports each client's CPU and their ratio.
t.test('bench/micro/webhook-delivery.ts: a short run reports both clients and their ratio', async (t) => {
  const out = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['--import', 'tsx', SCRIPT, '--rounds', '1', '--seconds', '0.3', '--in-flight', '4'], { timeout: 60_000 }, (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout))),
  );
  for (const client of ['deliverPooled', 'undici request\\(\\)']) {
    const line = new RegExp(`round 1, ${client}: (\\d+) deliveries/s, client ([\\d.]+) µs CPU a delivery, receiver ([\\d.]+)`).exec(out);
    t.ok(line, `a round of ${client} is reported`);
    t.ok(Number(line?.[1]) > 0 && Number(line?.[2]) > 0 && Number(line?.[3]) > 0, `with deliveries and CPU on both sides (${line?.[0]})`);
  }
  t.match(out, /deliverPooled ÷ undici request\(\): [\d.]+× the client CPU a delivery/);
});

const LMDB_SCRIPT = new URL('../../bench/micro/lmdb-writes.ts', import.meta.url).pathname;
const runLmdb = (args: string[]) =>
  new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['--import', 'tsx', LMDB_SCRIPT, ...args], { timeout: 60_000 }, (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout))),
  );

t.test('bench/micro/lmdb-writes.ts: the closed loop reports messages, puts and CPU; --rates reports each message from arrival to durable', async (t) => {
  const closed = /chats 2, batch 1: (\d+) msgs\/s, (\d+) puts\/s, CPU [\d.]+ cores, ([\d.]+) µs\/msg/.exec(await runLmdb(['--chats', '2', '--batch', '1', '--seconds', '0.2']));
  t.ok(closed && Number(closed[1]) > 0 && Number(closed[3]) > 0, `messages written, with their CPU (${closed?.[0]})`);
  const open = /chats 2, 100 msgs\/s: arrival to durable p50 ([\d.]+) ms, p99 ([\d.]+) ms, max ([\d.]+) ms \((\d+) messages\)/.exec(await runLmdb(['--chats', '2', '--rates', '100', '--seconds', '0.3']));
  t.ok(open, 'the open loop is reported');
  t.equal(Number(open?.[4]), 30, 'every message that arrived was written (100/s for 0.3 s)');
  t.ok(Number(open?.[1]) <= Number(open?.[2]) && Number(open?.[2]) <= Number(open?.[3]), `p50 ≤ p99 ≤ max (${open?.[0]})`);
});
