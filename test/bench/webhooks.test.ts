import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test('webhooks smoke: sends without and with an endpoint, every event delivered and verified', async (t) => {
  const run = await bench(['webhooks', '--smoke', '--workers', '1']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'webhooks', ['webhooks']);
  const { rows, summary } = run.result('webhooks');
  t.equal(rows.length, 2, 'one round: no endpoint, then one');
  for (const r of rows) {
    t.ok(Number(r.ackedPerSecond) > 0, `${r.mode}: acked sends`);
    t.equal(r.errors, 0, `${r.mode}: no errors`);
  }
  const hooked = rows.find((r) => r.mode !== 'no endpoint')!;
  t.equal(hooked.eventsDelivered, hooked.sendsAcked, 'one message.new delivered per acknowledged send');
  t.equal((summary as { forgedDeliveries: number }).forgedDeliveries, 0, 'the sampled deliveries verify');
  t.ok((summary as { verifiedDeliveries: number }).verifiedDeliveries > 0, 'some deliveries were verified');
  t.ok(Number(hooked.receiverCpuUsPerRequest) > 0, "the receiver's CPU per request is reported");
  t.ok(Number((summary as { ratios: { sends: number } }).ratios.sends) > 0, 'the ratio is reported');
  t.match(run.file('RESULTS.md'), /With one endpoint ÷ without/);
});
