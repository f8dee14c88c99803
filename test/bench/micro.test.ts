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
