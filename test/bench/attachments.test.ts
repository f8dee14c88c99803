import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test('attachments smoke (sends --attachments 1): 1 MB uploads, then sends without and with an attachment, none refused', async (t) => {
  const run = await bench(['sends', '--attachments', '1', '--smoke', '--workers', '1']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'attachments', ['attachments'], 'npm run bench -- sends --attachments 1');
  const { rows, summary } = run.result('attachments');
  t.same(rows.map((r) => r.mode), ['upload 1 MB', 'send, no attachment', 'send, one attachment'], 'the uploads, then one round of each send');
  t.ok(Number(rows[0]!.megabytesPerSecond) > 0, 'an upload rate');
  for (const r of rows.slice(1)) {
    t.ok(Number(r.sendsPerSecond) > 0, `${r.mode}: sends`);
    t.equal(r.errors, 0, `${r.mode}: none refused`);
  }
  // A smoke run sends for a fraction of a second: a mode's CPU can read 0 at the clock's resolution, so its ratio is 0 then.
  const ratio = (summary as { ratios: { cpuPerSend: unknown } }).ratios.cpuPerSend;
  t.ok(typeof ratio === 'number' && Number.isFinite(ratio) && ratio >= 0, `the CPU ratio is reported (${String(ratio)})`);
  t.match(run.file('RESULTS.md'), /With one attachment ÷ without: server CPU per send/);
});
