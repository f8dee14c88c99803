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

t.test('pooled deliveries: each outcome of an exchange is one result, and an answer is read up to 64 KiB', async (t) => {
  const seen: { path: string; headers: Record<string, unknown>; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ path: req.url!, headers: req.headers, body });
      if (req.url!.startsWith('/ok')) return res.writeHead(204).end();
      if (req.url === '/fail') return res.writeHead(500).end('no');
      if (req.url === '/moved') return res.writeHead(301, { location: '/ok' }).end();
      // A 2xx whose answer never ends: delivered once its status is in, the rest unread.
      if (req.url === '/long') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(16 * 1024);
        const timer = setInterval(() => res.write(chunk), 1);
        res.on('close', () => clearInterval(timer));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const pool = deliveryPool(true, 4);
  t.teardown(() => pool.close());
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const secret = newWebhookSecret();
  const send = (url: string, id = 'evt_a') => deliverPooled(pool, { url, secret, id, body: '{"type":"message.new"}', timeoutMs: 5_000, allowInsecure: true });

  const ok = await send(`${base}/ok?x=1`);
  t.same({ ok: ok.ok, statusCode: ok.statusCode, error: ok.error }, { ok: true, statusCode: 204, error: undefined });
  t.equal(seen[0]!.path, '/ok?x=1', 'path and query are sent');
  t.doesNotThrow(() => new Webhook(secret).verify(seen[0]!.body, seen[0]!.headers as Record<string, string>), 'the delivery verifies');
  const failed = await send(`${base}/fail`);
  t.same({ ok: failed.ok, statusCode: failed.statusCode, error: failed.error }, { ok: false, statusCode: 500, error: 'HTTP 500' });
  const moved = await send(`${base}/moved`);
  t.same({ ok: moved.ok, statusCode: moved.statusCode }, { ok: false, statusCode: 301 }, 'a redirect is a failure, not followed');
  t.equal(seen.filter((s) => s.path === '/ok').length, 0, 'nothing went to where the redirect pointed');
  const long = await send(`${base}/long`);
  t.same({ ok: long.ok, statusCode: long.statusCode }, { ok: true, statusCode: 200 }, 'an endless 2xx answer ends the exchange once 64 KiB are read');
  t.ok(long.durationMs < 4_000, `without waiting for its end (${long.durationMs} ms)`);
  const after = await send(`${base}/ok`, 'evt_b');
  t.equal(after.ok, true, 'the pool still delivers afterwards');

  const invalid = await send('not a url');
  t.same({ ok: invalid.ok, error: invalid.error }, { ok: false, error: 'invalid URL' });
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const refused = await send(`http://127.0.0.1:${port}/ok`);
  t.equal(refused.ok, false);
  t.match(refused.error, /^ECONNREFUSED/, `a refused connection says so (${refused.error})`);
});
