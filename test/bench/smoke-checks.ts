import type { Test } from 'tap';
import type { BenchRun } from '../helpers/bench.ts';

/** What every smoke run must leave: exit 0, JSON with its run's metadata, CSV, a report with charts. */
export function checkOutputs(t: Test, run: BenchRun, scenario: string, charts: string[], command = `npm run bench -- ${scenario}`): void {
  t.equal(run.code, 0, `${scenario} exits 0 (stderr: ${run.stderr.slice(-2000)})`);
  const result = run.result(scenario);
  t.equal(result.scenario, scenario);
  t.match(result.meta, { date: String, commit: String, machine: { cores: Number }, versions: { node: process.version, 'socket.io': /^4\./ } });
  t.match(result.command, command);
  const csv = run.file(`${scenario}.csv`)!;
  t.match(csv.split('\n')[0], /^date,commit,scenario,/, 'CSV starts with date, commit, scenario');
  t.equal(csv.trim().split('\n').length, result.rows.length + 1, 'one CSV line per row');
  const report = run.file('RESULTS.md')!;
  t.match(report, `## ${scenario}`);
  for (const chart of charts) {
    t.match(run.file(`${chart}.svg`), /^<svg/, `${chart}.svg rendered`);
    t.match(report, `(${chart}.svg)`, `and linked from RESULTS.md`);
  }
  t.match(JSON.parse(run.stdout.trim().split('\n').pop()!), { scenario }, 'the summary line on stdout');
}
