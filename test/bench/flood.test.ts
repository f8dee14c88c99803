import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test("flood smoke: a quiet tenant's latency alone and while another tenant's sockets send every action at the limits", async (t) => {
  // An application budget the 10 flooding sockets exceed, so both floods meet its retry hints.
  const run = await bench(['flood', '--smoke', '--workers', '1', '--sockets', '10', '--app-actions', '100']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'flood', ['flood']);
  const { rows, summary } = run.result('flood');
  t.same(rows.map((r) => [r.phase, r.flood ?? null]), [['quiet tenant alone', null], ['quiet tenant during the flood', 'obey'], ['quiet tenant during the flood', 'ignore']]);
  for (const r of rows) t.ok(Number(r.deliveredPerSecond) > 0, `${r.phase} ${r.flood ?? ''}: delivered`);
  const [, obey, ignore] = rows;
  for (const during of [obey!, ignore!]) {
    t.ok(Number(during.floodActionsPerSecond) > 0, `${during.flood}: the flood sent`);
    t.ok(Number(during.floodAcceptedPerSecond) > 0, `${during.flood}: part of it was taken`);
    t.match(String(during.floodRefusedByCode), /RATE_LIMITED/, `${during.flood}: part was refused with a retry hint`);
  }
  t.equal(obey!.floodUnanswered, 0, 'obeying: every action was answered');
  t.equal(obey!.floodSocketsClosed, null, 'obeying: no socket was closed');
  t.match(String(ignore!.floodSocketsClosed), /closed 4029: \d+/, 'ignoring: its sockets were closed with 4029');
  t.match(String(ignore!.floodUpgradesRefused), /HTTP 429: \d+/, 'and their reconnects refused 429');
  t.match(summary, { p99AloneMs: Number, obey: { p99DuringFloodMs: Number, p99Ratio: Number, goal: { want: /p99 < 50 ms/ } }, ignore: { p99DuringFloodMs: Number, p99Ratio: Number, goal: { want: /p99 < 50 ms/ } } });
});
