import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { writeReport } from '../../bench/lib/report.ts';
import { bench } from '../helpers/bench.ts';

const SUMMARY = new URL('../../bench/lib/profile-summary.ts', import.meta.url).pathname;

t.test('--help lists every scenario and option group; a wrong call exits 2 and says why', async (t) => {
  const help = await bench(['--help']);
  t.equal(help.code, 0);
  for (const word of ['connections', 'fanout', 'sends', 'history', 'cluster', 'all', 'report', '--systems', '--smoke', '--max-minutes', '--rate', '--depths', 'overload', '--no-overload']) t.match(help.stdout, word);
  help.cleanup();
  const unknown = await bench(['fly']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /unknown scenario fly/);
  unknown.cleanup();
  const bad = await bench(['fanout', '--rooms', '-3']);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--rooms must be a positive integer/);
  bad.cleanup();
  const option = await bench(['fanout', '--bogus']);
  t.equal(option.code, 2);
  t.match(option.stderr, /Unknown option '--bogus'/);
  option.cleanup();
  const system = await bench(['fanout', '--systems', 'chat,nats']);
  t.equal(system.code, 2);
  t.match(system.stderr, /unknown system nats/);
  system.cleanup();
});

t.test('report with no results says how to get some', async (t) => {
  const run = await bench(['report']);
  t.equal(run.code, 0);
  t.match(run.file('RESULTS.md'), /No results yet/);
  run.cleanup();
});

t.test('report renders results written before a column existed, with – in its cells', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-legacy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A cluster result as written before Redis and Cassandra were split and per-message costs, refusals and the overload run were measured.
  const row = (system: string, phase: string, offeredPerSecond: number) => ({ system, offeredPerSecond, sentPerSecond: offeredPerSecond, deliveredPerSecond: offeredPerSecond * 24, deliveredPct: 100, p50Ms: 15, p99Ms: 66, p999Ms: 81, maxMs: 90, serverCpuUsPerDelivery: 107, serverCpuCores: 0.49, generatorCpuCores: 0.11, servicesCpuCores: 0.71, sendErrors: 0, ok: true, phase });
  const rows = [row('chat', 'sweep', 268), row('chat', '70% of max', 188), row('uws', 'sweep', 8675), row('uws', '70% of max', 6073)];
  const legacy = {
    scenario: 'cluster',
    meta: { date: '2026-11-23T00:56:18.744Z', commit: '9db267ea8cd1', dirty: false, machine: { os: 'Linux', cpu: 'cpu', cores: 2, memoryGiB: 8, freeMemoryGiB: 4 }, versions: { node: 'v20.20.2', 'uWebSockets.js': '1.5.0', 'socket.io': '4.8.4' } },
    command: 'npm run bench -- cluster --no-progress',
    parameters: { rooms: 12, members: 24 },
    rows,
    summary: { chat: { maxRate: 268, maxDeliveredPerSecond: 6432, capped: false, at70: rows[1] }, uws: { maxRate: 8675, maxDeliveredPerSecond: 208200, capped: true, at70: rows[3] }, ratios: { chatVsuws: 0.031 } },
    notes: [],
  };
  writeFileSync(join(dir, 'cluster.json'), JSON.stringify(legacy));
  await writeReport(dir, join(dir, 'RESULTS.md'));
  const report = readFileSync(join(dir, 'RESULTS.md'), 'utf8');
  t.match(report, /\| chat \| 268 \| 6,432 \| ≤ 0\.03× \| 66 \| 81 \| 107 \| – \| – \| – \| – \| 0\.11 \|/, 'the new cost columns show – for an old run');
  t.match(report, 'Redis + Cassandra cores', 'the old combined column is still shown');
  t.notMatch(report, '### Overload', 'no overload table without an overload run');
  t.notMatch(report, '### Cassandra statements', 'no statements table without counts');
  // A second result from the same machine with less memory free: still one machine line, and each section names its machine.
  const other = { ...legacy, scenario: 'cluster', meta: { ...legacy.meta, machine: { ...legacy.meta.machine, freeMemoryGiB: 3 } } };
  writeFileSync(join(dir, 'fanout.json'), JSON.stringify({ ...other, scenario: 'fanout', parameters: { rooms: 1 }, rows: [], summary: {} }));
  await writeReport(dir, join(dir, 'RESULTS.md'));
  const two = readFileSync(join(dir, 'RESULTS.md'), 'utf8');
  t.equal(two.match(/^Machine: /gm)?.length, 1, 'free memory does not make another machine line');
  t.equal(two.match(/^Run .* on cpu, 2 cores, 8 GiB, Linux; /gm)?.length, 2, 'each section names its machine');
  // Runs from two machines: one list of them, each once.
  writeFileSync(join(dir, 'fanout.json'), JSON.stringify({ ...other, scenario: 'fanout', meta: { ...other.meta, machine: { ...other.meta.machine, cpu: 'other cpu' } }, parameters: { rooms: 1 }, rows: [], summary: {} }));
  await writeReport(dir, join(dir, 'RESULTS.md'));
  const mixed = readFileSync(join(dir, 'RESULTS.md'), 'utf8');
  t.equal(mixed.match(/^Machines: /gm)?.length, 1, 'two machines: one list');
  t.same(mixed.match(/^- .*cpu, 2 cores, 8 GiB, Linux$/gm)?.sort(), ['- cpu, 2 cores, 8 GiB, Linux', '- other cpu, 2 cores, 8 GiB, Linux'], 'each machine once');
});

t.test('--profile writes a CPU profile of the service that summarises by function', async (t) => {
  const profiles = mkdtempSync(join(tmpdir(), 'bench-profile-'));
  t.teardown(() => rmSync(profiles, { recursive: true, force: true }));
  const run = await bench(['sends', '--smoke', '--systems', 'chat', '--transports', 'http', '--workers', '1', '--profile', profiles]);
  t.teardown(run.cleanup);
  t.equal(run.code, 0, run.stderr);
  const written = readdirSync(profiles).filter((f) => f.endsWith('.cpuprofile'));
  t.ok(written.length > 0, `profiles written: ${written.join(', ')}`);
  const summary = execFileSync(process.execPath, ['--import', 'tsx', SUMMARY, join(profiles, written[0]!), '5'], { encoding: 'utf8' });
  t.match(summary, /%/, 'the summary lists shares of CPU time');
});

t.test('the webhooks report gives the ratio of each round next to the mean', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const row = (round: number, mode: string, ackedPerSecond: number) => ({ system: 'chat', mode, round, ackedPerSecond, p50Ms: 50, p99Ms: 90, serverCpuUsPerSend: 55, errors: 0 });
  const rows = [row(1, 'no endpoint', 20_000), row(1, 'one endpoint, every event', 14_000), row(2, 'no endpoint', 18_000), row(2, 'one endpoint, every event', 15_300), row(3, 'no endpoint', 19_000), row(3, 'one endpoint, every event', 13_300)];
  const result = {
    scenario: 'webhooks',
    meta: { date: '2026-11-27T00:00:00.000Z', commit: '000000000000', dirty: false, machine: { os: 'Linux', cpu: 'cpu', cores: 2, memoryGiB: 8, freeMemoryGiB: 4 }, versions: { node: 'v20.20.2', 'uWebSockets.js': '1.5.0', 'socket.io': '4.8.4' } },
    command: 'npm run bench -- webhooks --no-progress',
    parameters: { rounds: 3 },
    rows,
    summary: { ratios: { sends: 0.75, p99: 1.5 } },
    notes: [],
  };
  writeFileSync(join(dir, 'webhooks.json'), JSON.stringify(result));
  await writeReport(dir, join(dir, 'RESULTS.md'));
  const report = readFileSync(join(dir, 'RESULTS.md'), 'utf8');
  t.match(report, 'sends/s 0.75×, p99 1.5× (means of the rounds); round by round 0.70–0.85×.', 'lowest 13,300 ÷ 19,000, highest 15,300 ÷ 18,000');
});
