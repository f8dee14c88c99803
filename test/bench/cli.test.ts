import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { bench } from '../helpers/bench.ts';

const SUMMARY = new URL('../../bench/lib/profile-summary.ts', import.meta.url).pathname;

t.test('--help lists every scenario and option group; a wrong call exits 2 and says why', async (t) => {
  const help = await bench(['--help']);
  t.equal(help.code, 0);
  for (const word of ['connections', 'fanout', 'sends', 'history', 'cluster', 'all', 'report', '--systems', '--smoke', '--max-minutes', '--rate', '--depths']) t.match(help.stdout, word);
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
