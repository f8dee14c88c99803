import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { Webhook } from 'standardwebhooks';
import { deliver, isPublicAddress, webhookUrlProblem } from '../../common/webhooks/index.ts';
import { assertProblem } from '../helpers/problem.ts';
import { client, newAccount, startService } from '../helpers/index.ts';

// README, "Webhooks": endpoints per application in the management API, https:// and public
// addresses only (unless WEBHOOK_ALLOW_INSECURE_URLS), deliveries signed per Standard Webhooks and
// verified here with its reference library.
const strict = await startService();
const relaxed = await startService({ WEBHOOK_ALLOW_INSECURE_URLS: 'true' });
t.teardown(() => Promise.all([strict.stop(), relaxed.stop()]));

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** A receiver on loopback that records every POST and answers what `answer` says. */
async function receiver(t: Test, answer: (req: IncomingMessage, res: ServerResponse) => void = (_q, res) => res.writeHead(200).end('ok')) {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

async function account(svc: typeof strict) {
  const api = client(svc.controlUrl);
  const token = (await api.post('/api/auth/register', newAccount('hooks'))).body.accessToken as string;
  const appId = (await api.post('/api/client/apps', { name: 'Hooks' }, token)).body.id as string;
  return { api, token, appId, base: `/api/client/apps/${appId}/webhooks` };
}

t.test('URLs: https:// only, and never a loopback, private, link-local or reserved address', async (t) => {
  const { api, token, base } = await account(strict);
  for (const url of ['http://hooks.example.com/x', 'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://192.168.0.1/', 'https://169.254.169.254/latest', 'https://[::1]/x', 'https://[::ffff:127.0.0.1]/x', 'https://[fd00::1]/x', 'https://localhost/x', 'https://LOCALHOST./x', 'https://user:pw@hooks.example.com/', 'not a url']) {
    const res = await api.post(base, { url, events: ['message.new'] }, token);
    assertProblem(t, res, 400, 'VALIDATION_FAILED', url);
    t.match(res.body.errors, [{ path: '/body/url' }], `${url}: the field is named`);
  }
  t.equal((await api.post(base, { url: 'https://hooks.example.com/chat', events: ['message.new'] }, token)).status, 201, 'a public https URL is taken');
  t.equal((await api.post(base, { url: 'https://8.8.8.8/hook', events: ['message.new'] }, token)).status, 201, 'so is a public address');
  t.equal(isPublicAddress('100.64.0.1'), false, 'carrier-grade NAT is not public');
  t.equal(webhookUrlProblem('http://127.0.0.1:9/x', true), undefined, 'WEBHOOK_ALLOW_INSECURE_URLS allows http:// and loopback');
});

t.test('a name that resolves inside is refused at delivery time', async (t) => {
  const refused = await deliver({ url: 'https://localhost:9/x', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', id: 'e1', body: '{}', timeoutMs: 2000, allowInsecure: false });
  t.equal(refused.ok, false);
  t.match(refused.error, /localhost resolves to .* which webhooks may not reach/, `refused before connecting: ${refused.error}`);
});

t.test('events, description and ids are checked; the field is named', async (t) => {
  const { api, token, base } = await account(strict);
  const url = 'https://hooks.example.com/chat';
  for (const [body, path] of [
    [{ url, events: [] }, '/body/events'],
    [{ url, events: ['message.sent'] }, '/body/events/0'],
    [{ url, events: ['message.new', 'message.new'] }, '/body/events'],
    [{ url, events: ['message.new'], description: 'x'.repeat(201) }, '/body/description'],
    [{ url, events: ['message.new'], extra: 1 }, '/body'],
    [{ events: ['message.new'] }, '/body'],
  ] as const) {
    const res = await api.post(base, body, token);
    assertProblem(t, res, 400, 'VALIDATION_FAILED', JSON.stringify(body).slice(0, 60));
    t.ok((res.body.errors as { path: string }[]).some((e) => e.path.startsWith(path)), `names ${path}: ${JSON.stringify(res.body.errors)}`);
  }
  assertProblem(t, await api.get(`${base}/not-a-uuid`, token), 400, 'VALIDATION_FAILED', 'a bad id');
});

t.test('create, list, get, update, reveal, rotate, delete; limit 5; another account sees nothing', async (t) => {
  const { api, token, appId, base } = await account(strict);
  const created = await api.post(base, { url: 'https://hooks.example.com/a', events: ['message.new', 'user.online'], description: 'push' }, token);
  t.equal(created.status, 201);
  t.same(Object.keys(created.body).sort(), ['createdAt', 'description', 'events', 'id', 'secret', 'status', 'updatedAt', 'url']);
  t.match(created.body, { url: 'https://hooks.example.com/a', events: ['message.new', 'user.online'], description: 'push', status: 'ACTIVE' });
  t.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'a Standard Webhooks secret: whsec_ and 32 bytes of base64');
  const id = created.body.id as string;
  const listed = await api.get(base, token);
  t.same(listed.body.webhooks.map((w: { id: string }) => w.id), [id]);
  t.notOk(JSON.stringify(listed.body).includes(created.body.secret), 'the list never shows the secret');
  t.notOk(JSON.stringify((await api.get(`${base}/${id}`, token)).body).includes('whsec_'), 'nor does get');

  const off = await api.put(`${base}/${id}`, { status: 'DISABLED' }, token);
  t.match(off.body, { status: 'DISABLED', disabledReason: 'disabled by the integrator' });
  const on = await api.put(`${base}/${id}`, { status: 'ACTIVE', events: ['chat.created'], url: 'https://hooks.example.com/b', description: '' }, token);
  t.match(on.body, { status: 'ACTIVE', events: ['chat.created'], url: 'https://hooks.example.com/b' });
  t.equal(on.body.disabledReason, undefined, 'on again: no reason');
  t.equal(on.body.description, undefined, 'an empty description removes it');
  assertProblem(t, await api.put(`${base}/${id}`, {}, token), 400, 'VALIDATION_FAILED', 'an empty change');
  assertProblem(t, await api.put(`${base}/${id}`, { url: 'https://10.0.0.1/' }, token), 400, 'VALIDATION_FAILED', 'a private URL on update');

  t.same((await api.get(`${base}/${id}/secret`, token)).body, { secret: created.body.secret }, 'reveal');
  const rotated = (await api.post(`${base}/${id}/secret/rotate`, undefined, token)).body.secret as string;
  t.not(rotated, created.body.secret, 'rotate: a new secret');
  t.same((await api.get(`${base}/${id}/secret`, token)).body, { secret: rotated });

  const other = await account(strict);
  assertProblem(t, await other.api.get(`${base}/${id}`, other.token), 404, 'APP_NOT_FOUND', "another account's application");
  assertProblem(t, await api.get(`${base}/${other.appId}`, token), 404, 'WEBHOOK_NOT_FOUND', 'no such endpoint');

  for (let i = 0; i < 4; i++) t.equal((await api.post(base, { url: `https://hooks.example.com/${i}`, events: ['message.new'] }, token)).status, 201);
  assertProblem(t, await api.post(base, { url: 'https://hooks.example.com/6', events: ['message.new'] }, token), 403, 'WEBHOOK_LIMIT_REACHED', 'the sixth');
  t.equal((await api.del(`${base}/${id}`, token)).status, 204);
  assertProblem(t, await api.del(`${base}/${id}`, token), 404, 'WEBHOOK_NOT_FOUND', 'deleted');
  t.equal((await api.post(base, { url: 'https://hooks.example.com/6', events: ['message.new'] }, token)).status, 201, 'a place again');
  t.equal((await api.del(`/api/client/apps/${appId}`, token)).status, 204);
  assertProblem(t, await api.get(base, token), 404, 'APP_NOT_FOUND', 'the application and its endpoints are gone');
});

t.test('a test delivery is signed per Standard Webhooks and verifies with its library', async (t) => {
  const { api, token, appId, base } = await account(relaxed);
  const hook = await receiver(t);
  const created = (await api.post(base, { url: hook.url, events: ['message.new'] }, token)).body;
  const result = await api.post(`${base}/${created.id}/test`, undefined, token);
  t.equal(result.status, 200);
  t.match(result.body, { delivered: true, statusCode: 200 });
  t.equal(hook.got.length, 1, 'one POST');
  const [got] = hook.got as [Received];
  t.equal(got.headers['content-type'], 'application/json');
  t.equal(got.headers['webhook-id'], result.body.eventId, 'webhook-id is the event id the test reports');
  const verified = new Webhook(created.secret as string).verify(got.body, got.headers) as Record<string, unknown>;
  t.match(verified, { type: 'webhook.test', id: result.body.eventId, appId, data: { webhookId: created.id } }, 'verified, and the body is the envelope');
  t.match(verified.timestamp, /^\d{4}-\d\d-\d\dT/);

  const rotated = (await api.post(`${base}/${created.id}/secret/rotate`, undefined, token)).body.secret as string;
  await api.post(`${base}/${created.id}/test`, undefined, token);
  const second = hook.got[1]!;
  t.throws(() => new Webhook(created.secret as string).verify(second.body, second.headers), 'the old secret no longer verifies');
  t.ok(new Webhook(rotated).verify(second.body, second.headers), 'the new one does');
  const tampered = { ...second.headers, 'webhook-timestamp': String(Number(second.headers['webhook-timestamp']) - 1) };
  t.throws(() => new Webhook(rotated).verify(second.body, tampered), 'a changed timestamp fails verification');
});

t.test('a test delivery reports a failing receiver: 500, a redirect, nobody listening', async (t) => {
  const { api, token, base } = await account(relaxed);
  const failing = await receiver(t, (_q, res) => res.writeHead(500).end('no'));
  const moving = await receiver(t, (_q, res) => res.writeHead(302, { location: 'http://127.0.0.1:9/' }).end());
  for (const [url, expected] of [
    [failing.url, { delivered: false, statusCode: 500, error: 'HTTP 500' }],
    [moving.url, { delivered: false, statusCode: 302 }],
    ['http://127.0.0.1:9/nobody', { delivered: false, error: /ECONNREFUSED/ }],
  ] as const) {
    const id = (await api.post(base, { url, events: ['message.new'] }, token)).body.id as string;
    t.match((await api.post(`${base}/${id}/test`, undefined, token)).body, expected, url);
  }
  t.equal(moving.got.length, 1, 'the redirect is not followed');
});
