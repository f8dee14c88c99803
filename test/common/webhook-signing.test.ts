import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { deliverPooled, deliveryPool, newWebhookSecret, signatureHeaders } from '../../common/webhooks/index.ts';

// Deliveries are signed with node:crypto's HMAC and bounded by one timer each (common/webhooks):
// what the reference library verifies, and what a receiver that never answers gets.

t.test('every signature verifies with the Standard Webhooks reference library, and only for its own bytes', async (t) => {
  for (let i = 0; i < 50; i++) {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ type: 'message.new', n: i, text: 'é'.repeat(i) });
    const headers = signatureHeaders(secret, `evt_${i}`, new Date(), body);
    t.doesNotThrow(() => new Webhook(secret).verify(body, headers), `delivery ${i} verifies`);
    t.throws(() => new Webhook(secret).verify(`${body} `, headers), 'a changed body does not');
    t.throws(() => new Webhook(newWebhookSecret()).verify(body, headers), 'nor another secret');
  }
});

t.test('a receiver that never answers: the pooled delivery ends at its timeout, as a failure that says so', async (t) => {
  const server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const pool = deliveryPool(true, 4);
  t.teardown(() => pool.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const started = performance.now();
  const result = await deliverPooled(pool, { url, secret: newWebhookSecret(), id: 'evt_slow', body: '{}', timeoutMs: 300, allowInsecure: true });
  const took = performance.now() - started;
  t.same({ ok: result.ok, error: result.error }, { ok: false, error: 'no answer within 300 ms' });
  t.ok(took >= 290 && took < 2000, `ended at its timeout (${Math.round(took)} ms)`);
});
