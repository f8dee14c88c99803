import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import type { PushDeliveryRecord } from '../../common/push/index.ts';
import { LmdbControlStore } from '../../control/index.ts';
import { ChatApiError, ManagementClient } from '../../sdk/management.ts';
import { assertProblem } from '../helpers/problem.ts';
import { client, newAccount, removeDir, startService } from '../helpers/index.ts';

// README, "Push notifications": GET /api/client/apps/:appId/push/deliveries lists the attempts the
// nodes recorded, newest first, one provider's on asking, without `appId`. The attempts are
// written here through the store's public interface, on the running service's own LMDB
// environment (LMDB lets a second process open it), as a node records them.
const svc = await startService();
const store = LmdbControlStore.open(join(svc.dataDir, 'control'));
t.teardown(async () => {
  await store.close();
  await svc.stop();
  removeDir(svc.dataDir);
});

async function account() {
  const api = client(svc.controlUrl);
  const token = (await api.post('/api/auth/register', newAccount('push-log'))).body.accessToken as string;
  const appId = (await api.post('/api/client/apps', { name: 'Pushed' }, token)).body.id as string;
  return { api, token, appId, log: `/api/client/apps/${appId}/push/deliveries` };
}

const T0 = Date.now() - 60_000;
/** An attempt of `appId` made `seconds` after T0. */
const attempt = (appId: string, seconds: number, over: Partial<PushDeliveryRecord> = {}): PushDeliveryRecord => ({
  id: randomUUID(),
  appId,
  provider: 'webPush',
  eventId: `evt_${randomUUID()}`,
  messageId: randomUUID(),
  userId: 'alice',
  deviceId: randomUUID(),
  attempt: 1,
  result: 'sent',
  statusCode: 201,
  durationMs: 40,
  at: new Date(T0 + seconds * 1000).toISOString(),
  ...over,
});
const shown = ({ appId: _appId, ...rest }: PushDeliveryRecord) => rest;

t.test('the log: newest first without appId, one provider on asking, at most the limit', async (t) => {
  const { api, token, appId, log } = await account();
  t.same((await api.get(log, token)).body, { deliveries: [] }, 'empty before any push');
  const records = [
    attempt(appId, 0),
    attempt(appId, 1, { provider: 'apns', result: 'retry', statusCode: 503, reason: 'ServiceUnavailable', nextRetryAt: new Date(T0 + 31_000).toISOString() }),
    attempt(appId, 2, { provider: 'fcm', result: 'gone', statusCode: 404, reason: 'UNREGISTERED' }),
    attempt(appId, 3, { provider: 'apns', attempt: 2 }),
  ];
  await store.pushSettings.recordDeliveries([...records, attempt(randomUUID(), 4)]);
  const all = await api.get(log, token);
  t.equal(all.status, 200, all.text);
  t.same(all.body, { deliveries: [...records].reverse().map(shown) }, 'every field but appId, newest first');
  t.same((await api.get(`${log}?provider=apns`, token)).body.deliveries.map((d: { id: string }) => d.id), [records[3]!.id, records[1]!.id], 'APNs only');
  t.same((await api.get(`${log}?provider=webPush&limit=100`, token)).body.deliveries.map((d: { id: string }) => d.id), [records[0]!.id], 'Web Push only');
  t.same((await api.get(`${log}?limit=2`, token)).body.deliveries.map((d: { id: string }) => d.id), [records[3]!.id, records[2]!.id], 'the newest 2');
});

t.test('refusals: a bad provider or limit names the field; another account, an unknown app, no token', async (t) => {
  const { api, token, appId, log } = await account();
  for (const [query, field] of [['provider=email', 'provider'], ['provider=', 'provider'], ['limit=0', 'limit'], ['limit=101', 'limit'], ['limit=ten', 'limit']] as const) {
    const res = await api.get(`${log}?${query}`, token);
    assertProblem(t, res, 400, 'VALIDATION_FAILED', query);
    t.equal(res.body.errors?.[0]?.path, `/query/${field}`, `${query}: names ${field}`);
  }
  const other = await account();
  await store.pushSettings.recordDeliveries([attempt(appId, 0)]);
  assertProblem(t, await other.api.get(log, other.token), 404, 'APP_NOT_FOUND', "another account's application");
  assertProblem(t, await api.get(`/api/client/apps/${randomUUID()}/push/deliveries`, token), 404, 'APP_NOT_FOUND', 'an unknown application');
  assertProblem(t, await api.get(log), 401, 'AUTH_REQUIRED', 'no token');
  t.equal((await api.get(log, token)).body.deliveries.length, 1, 'the owner sees it');
});

t.test("deleting the application deletes its log", async (t) => {
  const { api, token, appId, log } = await account();
  await store.pushSettings.recordDeliveries([attempt(appId, 0), attempt(appId, 1, { provider: 'fcm' })]);
  t.equal((await api.get(log, token)).body.deliveries.length, 2);
  t.equal((await api.del(`/api/client/apps/${appId}`, token)).status, 204);
  t.same(await store.pushSettings.deliveries(appId, undefined, 100), [], 'nothing left in the store');
});

t.test('the OpenAPI document describes the route and an attempt', async (t) => {
  const doc = (await client(svc.controlUrl).get('/openapi.json')).body;
  const op = doc.paths['/api/client/apps/{appId}/push/deliveries']?.get;
  t.equal(op?.operationId, 'listPushDeliveries');
  t.same(op?.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name).sort(), ['limit', 'provider']);
  t.ok(['200', '400', '401', '404'].every((status) => status in (op?.responses ?? {})), 'its own statuses among those every route has');
  const item = op?.responses['200'].content['application/json'].schema.properties.deliveries.items;
  t.same(Object.keys(item?.properties ?? {}).sort(), ['at', 'attempt', 'deviceId', 'durationMs', 'eventId', 'id', 'messageId', 'nextRetryAt', 'provider', 'reason', 'result', 'statusCode', 'userId'], 'every field of an attempt but appId');
});

t.test('ManagementClient.getPushDeliveries', async (t) => {
  const mgmt = new ManagementClient({ baseUrl: svc.controlUrl });
  await mgmt.register(newAccount('sdk-push-log'));
  const app = await mgmt.createApplication('SDK push log');
  t.same(await mgmt.getPushDeliveries(app.id), [], 'none yet');
  const records = [attempt(app.id, 0), attempt(app.id, 1, { provider: 'fcm' }), attempt(app.id, 2)];
  await store.pushSettings.recordDeliveries(records);
  t.same(await mgmt.getPushDeliveries(app.id), [...records].reverse().map(shown), 'newest first');
  t.same(await mgmt.getPushDeliveries(app.id, { provider: 'fcm' }), [shown(records[1]!)], 'one provider');
  t.same((await mgmt.getPushDeliveries(app.id, { limit: 1 })).map((d) => d.id), [records[2]!.id], 'a limit');
  const invalid = await mgmt.getPushDeliveries(app.id, { limit: 500 }).catch((e: unknown) => e);
  t.ok(invalid instanceof ChatApiError && invalid.code === 'VALIDATION_FAILED', 'limit 500: VALIDATION_FAILED');
  const missing = await mgmt.getPushDeliveries(randomUUID()).catch((e: unknown) => e);
  t.ok(missing instanceof ChatApiError && missing.code === 'APP_NOT_FOUND', 'an unknown application: APP_NOT_FOUND');
});
