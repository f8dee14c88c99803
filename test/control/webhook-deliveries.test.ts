import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { Webhook } from 'standardwebhooks';
import { ChatApiError, ManagementClient } from '../../sdk/management.ts';
import { assertProblem, retryAfterSeconds } from '../helpers/problem.ts';
import { client, newAccount, removeDir, startService } from '../helpers/index.ts';

// README, "Webhooks", "Delivery log": every attempt (tests and retries included) is logged per
// endpoint and listed newest first without its body; a retry sends the logged body again with the
// same webhook-id, signed with the endpoint's current secret, to its current URL.
const svc = await startService({ WEBHOOK_ALLOW_INSECURE_URLS: 'true' });
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** A receiver on loopback that records every POST and answers `status` (which the test may change). */
async function receiver(t: Test, status = 204) {
  const got: Received[] = [];
  const state = { status };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
      res.writeHead(state.status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, state };
}

async function account() {
  const api = client(svc.controlUrl);
  const token = (await api.post('/api/auth/register', newAccount('log'))).body.accessToken as string;
  const appId = (await api.post('/api/client/apps', { name: 'Logged' }, token)).body.id as string;
  return { api, token, appId, base: `/api/client/apps/${appId}/webhooks` };
}

const ATTEMPT_FIELDS = ['at', 'attempt', 'durationMs', 'eventId', 'id', 'status', 'type'];

t.test('a failed test is logged with its status; a retry after the fix succeeds with the same webhook-id, current secret and URL', async (t) => {
  const { api, token, appId, base } = await account();
  const first = await receiver(t, 500);
  const created = (await api.post(base, { url: first.url, events: ['message.new'] }, token)).body;
  const hook = `${base}/${created.id}`;
  t.same((await api.get(`${hook}/deliveries`, token)).body, { deliveries: [] }, 'a new endpoint has an empty log');

  const test = (await api.post(`${hook}/test`, undefined, token)).body;
  t.match(test, { delivered: false, statusCode: 500, error: 'HTTP 500' });
  t.match(test.eventId, /^evt_[0-9a-f]{26}$/, 'the test event has an event id');
  const listed = await api.get(`${hook}/deliveries`, token);
  t.equal(listed.status, 200);
  const [failed] = listed.body.deliveries as Record<string, unknown>[];
  t.equal(listed.body.deliveries.length, 1, 'the test is in the log');
  t.match(failed, { type: 'webhook.test', eventId: test.eventId, attempt: 1, status: 'failed', statusCode: 500, error: 'HTTP 500' }, 'failed, with the status and why');
  t.same(Object.keys(failed!).sort(), [...ATTEMPT_FIELDS, 'error', 'statusCode'].sort(), 'never the body; no next retry for a test');
  t.match(failed!.id, /^[0-9a-f-]{36}$/);
  t.ok(Math.abs(Date.parse(failed!.at as string) - Date.now()) < 60_000, 'at: when it was made');

  // The receiver is fixed and moved, and the secret rotated: the retry goes where and as the endpoint is now.
  const second = await receiver(t, 204);
  await api.put(hook, { url: second.url }, token);
  const secret = (await api.post(`${hook}/secret/rotate`, undefined, token)).body.secret as string;
  const retried = await api.post(`${hook}/deliveries/${failed!.id}/retry`, undefined, token);
  t.equal(retried.status, 200);
  t.match(retried.body, { type: 'webhook.test', eventId: test.eventId, attempt: 2, status: 'succeeded', statusCode: 204 }, 'the new attempt, succeeded');
  t.same(Object.keys(retried.body).sort(), [...ATTEMPT_FIELDS, 'statusCode'].sort(), 'shown as the log shows it');
  t.not(retried.body.id, failed!.id, 'an attempt of its own');
  t.equal(first.got.length, 1, 'nothing more to the old URL');
  t.equal(second.got.length, 1, 'one POST to the current URL');
  const [sent] = second.got as [Received];
  t.equal(sent.headers['webhook-id'], test.eventId, 'the same webhook-id');
  t.equal(sent.body, first.got[0]!.body, 'the same body, byte for byte');
  t.match(new Webhook(secret).verify(sent.body, sent.headers), { type: 'webhook.test', id: test.eventId, appId }, 'verified with the current secret (standardwebhooks)');
  t.throws(() => new Webhook(created.secret as string).verify(sent.body, sent.headers), 'not with the secret it was first signed with');

  const log = (await api.get(`${hook}/deliveries`, token)).body.deliveries as { id: string; attempt: number }[];
  t.same(log.map((d) => [d.id, d.attempt]), [[retried.body.id, 2], [failed!.id, 1]], 'newest first');
  t.same((await api.get(`${hook}/deliveries?limit=1`, token)).body.deliveries.map((d: { id: string }) => d.id), [retried.body.id], 'limit');
});

t.test('a retry of an unreachable endpoint is logged as failed, without a status code', async (t) => {
  const { api, token, base } = await account();
  const hook = `${base}/${(await api.post(base, { url: 'http://127.0.0.1:9/nobody', events: ['message.new'] }, token)).body.id}`;
  await api.post(`${hook}/test`, undefined, token);
  const [tested] = (await api.get(`${hook}/deliveries`, token)).body.deliveries;
  const retried = (await api.post(`${hook}/deliveries/${tested.id}/retry`, undefined, token)).body;
  t.match(retried, { status: 'failed', attempt: 2, error: /ECONNREFUSED/ });
  t.equal(retried.statusCode, undefined, 'nobody answered');
});

t.test('the log routes check their input and their owner', async (t) => {
  const { api, token, appId, base } = await account();
  const hook = `${base}/${(await api.post(base, { url: 'http://127.0.0.1:9/x', events: ['message.new'] }, token)).body.id}`;
  for (const limit of ['0', '101', 'x', '1.5', '-1']) {
    const res = await api.get(`${hook}/deliveries?limit=${limit}`, token);
    assertProblem(t, res, 400, 'VALIDATION_FAILED', `limit=${limit}`);
    t.match(res.body.errors, [{ path: '/query/limit' }], `limit=${limit}: the field is named`);
  }
  t.equal((await api.get(`${hook}/deliveries?limit=100`, token)).status, 200, 'limit=100 is taken');
  t.equal((await api.get(`${hook}/deliveries?limit=1`, token)).status, 200, 'limit=1 is taken');

  const bad = await api.get(`${base}/not-a-uuid/deliveries`, token);
  assertProblem(t, bad, 400, 'VALIDATION_FAILED', 'a bad endpoint id');
  t.match(bad.body.errors, [{ path: '/params/webhookId' }]);
  const badAttempt = await api.post(`${hook}/deliveries/not-a-uuid/retry`, undefined, token);
  assertProblem(t, badAttempt, 400, 'VALIDATION_FAILED', 'a bad attempt id');
  t.match(badAttempt.body.errors, [{ path: '/params/deliveryId' }]);

  assertProblem(t, await api.post(`${hook}/deliveries/${randomUUID()}/retry`, undefined, token), 404, 'WEBHOOK_DELIVERY_NOT_FOUND', 'an unknown attempt');
  assertProblem(t, await api.get(`${base}/${randomUUID()}/deliveries`, token), 404, 'WEBHOOK_NOT_FOUND', 'an unknown endpoint');
  assertProblem(t, await api.get(`${hook}/deliveries`), 401, 'AUTH_REQUIRED', 'no token');

  await api.post(`${hook}/test`, undefined, token);
  const [tested] = (await api.get(`${hook}/deliveries`, token)).body.deliveries;
  const other = await account();
  assertProblem(t, await other.api.get(`${hook}/deliveries`, other.token), 404, 'APP_NOT_FOUND', "another account's application: the log");
  assertProblem(t, await other.api.post(`${hook}/deliveries/${tested.id}/retry`, undefined, other.token), 404, 'APP_NOT_FOUND', "another account's application: a retry");
  const otherHook = (await other.api.post(other.base, { url: 'http://127.0.0.1:9/y', events: ['message.new'] }, other.token)).body.id as string;
  assertProblem(t, await other.api.post(`${other.base}/${otherHook}/deliveries/${tested.id}/retry`, undefined, other.token), 404, 'WEBHOOK_DELIVERY_NOT_FOUND', 'an attempt of another endpoint');

  // Deleting the endpoint takes its log along; the application's deletion takes its endpoints.
  t.equal((await api.del(hook, token)).status, 204);
  assertProblem(t, await api.get(`${hook}/deliveries`, token), 404, 'WEBHOOK_NOT_FOUND', 'the deleted endpoint');
  t.equal((await api.del(`/api/client/apps/${appId}`, token)).status, 204);
});

t.test('tests and retries share one budget: 10 per account per minute', async (t) => {
  const { api, token, base } = await account();
  const { url } = await receiver(t);
  const hook = `${base}/${(await api.post(base, { url, events: ['message.new'] }, token)).body.id}`;
  t.match((await api.post(`${hook}/test`, undefined, token)).body, { delivered: true });
  let latest = (await api.get(`${hook}/deliveries`, token)).body.deliveries[0] as { id: string; attempt: number };
  for (let i = 0; i < 9; i++) {
    const res = await api.post(`${hook}/deliveries/${latest.id}/retry`, undefined, token);
    t.equal(res.status, 200, `send ${i + 2}`);
    latest = res.body;
  }
  t.equal(latest.attempt, 10, 'each retry of the latest attempt counts one more');
  const limited = await api.post(`${hook}/deliveries/${latest.id}/retry`, undefined, token);
  assertProblem(t, limited, 429, 'RATE_LIMITED', 'the eleventh send');
  t.ok(retryAfterSeconds(limited) > 0, 'with Retry-After');
  assertProblem(t, await api.post(`${hook}/test`, undefined, token), 429, 'RATE_LIMITED', 'a test too');
  t.equal((await api.get(`${hook}/deliveries`, token)).body.deliveries.length, 10, 'refused sends are not logged');
});

t.test('ManagementClient: listWebhookDeliveries and retryWebhookDelivery', async (t) => {
  const hookServer = await receiver(t, 503);
  const mgmt = new ManagementClient({ baseUrl: svc.controlUrl });
  await mgmt.register(newAccount('sdk-log'));
  const app = await mgmt.createApplication('SDK log');
  const hook = await mgmt.createWebhook(app.id, { url: hookServer.url, events: ['message.new'] });
  const tested = await mgmt.testWebhook(app.id, hook.id);
  const [failed] = await mgmt.listWebhookDeliveries(app.id, hook.id);
  t.match(failed, { eventId: tested.eventId, type: 'webhook.test', attempt: 1, status: 'failed', statusCode: 503 }, 'listWebhookDeliveries');
  hookServer.state.status = 200;
  const retried = await mgmt.retryWebhookDelivery(app.id, hook.id, failed!.id);
  t.match(retried, { eventId: tested.eventId, attempt: 2, status: 'succeeded', statusCode: 200 }, 'retryWebhookDelivery');
  t.same((await mgmt.listWebhookDeliveries(app.id, hook.id, { limit: 1 })).map((d) => d.id), [retried.id], 'with a limit');
  t.equal((await mgmt.listWebhookDeliveries(app.id, hook.id, { limit: 100 })).length, 2);
  const notFound = await mgmt.retryWebhookDelivery(app.id, hook.id, randomUUID()).catch((e: unknown) => e);
  t.ok(notFound instanceof ChatApiError && notFound.code === 'WEBHOOK_DELIVERY_NOT_FOUND' && notFound.status === 404, 'an unknown attempt: WEBHOOK_DELIVERY_NOT_FOUND');
  const invalid = await mgmt.listWebhookDeliveries(app.id, hook.id, { limit: 0 }).catch((e: unknown) => e);
  t.ok(invalid instanceof ChatApiError && invalid.code === 'VALIDATION_FAILED', 'limit 0: VALIDATION_FAILED');
});
