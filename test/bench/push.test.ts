import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test("push smoke (sends --push web-push): every recipient offline, without and with Web Push, each shown its chat's newest message", async (t) => {
  const run = await bench(['sends', '--push', 'web-push', '--smoke', '--workers', '1']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'push', ['push'], 'npm run bench -- sends --push web-push');
  const { rows, summary } = run.result('push');
  t.equal(rows.length, 2, 'one round: no push, then Web Push');
  for (const r of rows) {
    t.ok(Number(r.ackedPerSecond) > 0, `${r.mode}: acked sends`);
    t.equal(r.errors, 0, `${r.mode}: no errors`);
  }
  const pushed = rows.find((r) => r.mode !== 'no push')!;
  t.equal(pushed.recipientsUpToDate, '4 of 4', "every recipient's newest push is of its chat's newest message");
  t.ok(Number(pushed.pushesMade) > 0 && Number(pushed.pushesMade) <= Number(pushed.sendsAcked), 'at most one push per acknowledged send');
  t.ok(Number(pushed.lastPushAfterRunMs) >= 0, 'when the last push arrived is reported');
  const s = summary as { decryptedPushes: number; undecryptablePushes: number; distinctMessagesDecrypted: number; ratios: { sends: number } };
  t.equal(s.undecryptablePushes, 0, 'every sampled push decrypts with its subscription keys');
  t.ok(s.decryptedPushes > 0 && s.distinctMessagesDecrypted === s.decryptedPushes, 'the sampled pushes are of distinct messages');
  t.ok(s.ratios.sends > 0, 'the ratio is reported');
  t.match(run.file('RESULTS.md'), /With Web Push ÷ without/);
});
