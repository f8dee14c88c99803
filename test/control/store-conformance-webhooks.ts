import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { ControlStore, WebhookDelivery, WebhookEndpoint } from '../../control/index.ts';
import { at, NOW } from '../helpers/fixed-clock.ts';

/** The WebhookStore part of the control store conformance suite (see store-conformance.ts). */
export function webhookStoreConformance(t: Test, fresh: (t: Test) => Promise<ControlStore>): void {
  const endpoint = (appId: string, over: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
    id: randomUUID(),
    appId,
    url: 'https://hooks.example.com/chat',
    events: ['message.new'],
    status: 'ACTIVE',
    secret: `whsec_${randomUUID()}`,
    createdAt: NOW,
    updatedAt: NOW,
    ...over,
  });

  t.test('webhooks: create, read back exactly, list oldest first, per application', async (t) => {
    const { webhooks } = await fresh(t);
    const app = randomUUID();
    const first = endpoint(app, { description: 'push', events: ['message.new', 'user.online'], createdAt: '2030-01-01T00:00:00.000Z' });
    const second = endpoint(app, { createdAt: '2030-01-02T00:00:00.000Z' });
    t.equal(await webhooks.create(second, 5), 'created');
    t.equal(await webhooks.create(first, 5), 'created');
    t.same(await webhooks.get(app, first.id), first, 'every field, description included');
    t.same(await webhooks.get(app, second.id), second, 'no description: none read back');
    t.same(await webhooks.list(app), [first, second], 'oldest first');
    t.same(await webhooks.list(randomUUID()), [], 'another application has none');
    t.equal(await webhooks.get(randomUUID(), first.id), undefined, 'an endpoint is found only under its application');
  });

  t.test('webhooks: update replaces the record; delete removes it; both say when there is none', async (t) => {
    const { webhooks } = await fresh(t);
    const app = randomUUID();
    const e = endpoint(app);
    await webhooks.create(e, 5);
    const changed: WebhookEndpoint = { ...e, url: 'https://other.example.com/', events: ['chat.created'], status: 'DISABLED', disabledReason: 'HTTP 410', secret: 'whsec_new', updatedAt: '2030-01-03T00:00:00.000Z' };
    t.equal(await webhooks.update(changed), 'updated');
    t.same(await webhooks.get(app, e.id), changed);
    t.equal(await webhooks.update({ ...changed, id: randomUUID() }), 'not-found');
    t.equal(await webhooks.delete(app, e.id), 'deleted');
    t.equal(await webhooks.get(app, e.id), undefined);
    t.equal(await webhooks.delete(app, e.id), 'not-found');
  });

  t.test('webhooks: the limit holds under concurrent creates, and a delete frees a place', async (t) => {
    const { webhooks } = await fresh(t);
    const app = randomUUID();
    const results = await Promise.all(Array.from({ length: 8 }, () => webhooks.create(endpoint(app), 5)));
    t.equal(results.filter((r) => r === 'created').length, 5, 'five of eight concurrent creates');
    const listed = await webhooks.list(app);
    t.equal(listed.length, 5);
    t.equal(await webhooks.create(endpoint(app), 5), 'limit');
    await webhooks.delete(app, listed[0]!.id);
    t.equal(await webhooks.create(endpoint(app), 5), 'created', 'a place again after a delete');
  });

  const attempt = (hook: WebhookEndpoint, seconds: number, over: Partial<WebhookDelivery> = {}): WebhookDelivery => ({
    id: randomUUID(),
    appId: hook.appId,
    endpointId: hook.id,
    eventId: `evt_${randomUUID().replaceAll('-', '').slice(0, 26)}`,
    type: 'message.new',
    attempt: 1,
    status: 'succeeded',
    statusCode: 204,
    durationMs: 12,
    at: at(seconds),
    body: JSON.stringify({ type: 'message.new', n: seconds }),
    ...over,
  });
  /** An endpoint in the store (the log keeps attempts of existing endpoints only). */
  const hookIn = async (store: ControlStore, appId: string = randomUUID()) => {
    const hook = endpoint(appId);
    await store.webhooks.create(hook, 5);
    return hook;
  };

  t.test('deliveries: read back exactly (optional fields absent stay absent), newest first, by id', async (t) => {
    const store = await fresh(t);
    const hook = await hookIn(store);
    const ok = attempt(hook, 0);
    const failed: WebhookDelivery = { ...attempt(hook, 30), status: 'failed', attempt: 2, statusCode: 500, error: 'HTTP 500', nextRetryAt: at(330), durationMs: 0 };
    const refused = attempt(hook, 60, { status: 'failed', error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9' });
    delete refused.statusCode;
    await store.webhooks.recordDeliveries([failed, ok]);
    await store.webhooks.recordDeliveries([refused]);
    t.same(await store.webhooks.deliveries(hook.appId, hook.id, 10), [refused, failed, ok], 'newest first, every field as recorded');
    const read = await store.webhooks.deliveries(hook.appId, hook.id, 10);
    t.same(Object.keys(read[0]!).sort(), Object.keys(refused).sort(), 'no statusCode, nextRetryAt read back when none was recorded');
    t.same(Object.keys(read[2]!).sort(), Object.keys(ok).sort());
    t.same(await store.webhooks.deliveries(hook.appId, hook.id, 2), [refused, failed], 'at most `limit`');
    t.same(await store.webhooks.delivery(hook.appId, hook.id, failed.id), failed, 'found by id');
    t.equal(await store.webhooks.delivery(hook.appId, hook.id, randomUUID()), undefined, 'an unknown id');
    t.equal(await store.webhooks.delivery(hook.appId, randomUUID(), failed.id), undefined, 'found only under its endpoint');
    await store.webhooks.recordDeliveries([]);
  });

  t.test('deliveries: attempts of one instant come newest id first; each endpoint has its own log', async (t) => {
    const store = await fresh(t);
    const hook = await hookIn(store);
    const other = await hookIn(store, hook.appId);
    const elsewhere = await hookIn(store);
    const same = [attempt(hook, 5, { id: '00000000-0000-4000-8000-000000000001' }), attempt(hook, 5, { id: '00000000-0000-4000-8000-000000000002' })];
    const mine = attempt(other, 7);
    const theirs = attempt(elsewhere, 9);
    // One call, several endpoints (of two applications).
    await store.webhooks.recordDeliveries([same[0]!, mine, theirs, same[1]!]);
    t.same(await store.webhooks.deliveries(hook.appId, hook.id, 10), [same[1], same[0]], 'equal `at`: the greater id first');
    t.same(await store.webhooks.deliveries(other.appId, other.id, 10), [mine], 'another endpoint of the application');
    t.same(await store.webhooks.deliveries(elsewhere.appId, elsewhere.id, 10), [theirs], 'an endpoint of another application');
    t.same(await store.webhooks.deliveries(randomUUID(), hook.id, 10), [], 'under another application: none');
  });

  t.test('deliveries: at least the last 100 are kept, newest first, across minutes and hours', async (t) => {
    const store = await fresh(t);
    const hook = await hookIn(store);
    // 130 attempts 37 s apart (spread over minutes and hours), recorded in three calls, out of order.
    const all = Array.from({ length: 130 }, (_, i) => attempt(hook, i * 37, { attempt: (i % 5) + 1 }));
    await store.webhooks.recordDeliveries(all.slice(60, 130));
    await store.webhooks.recordDeliveries(all.slice(0, 30));
    await store.webhooks.recordDeliveries(all.slice(30, 60));
    const newest = [...all].reverse();
    t.same(await store.webhooks.deliveries(hook.appId, hook.id, 100), newest.slice(0, 100), 'the newest 100, newest first');
    t.same(await store.webhooks.deliveries(hook.appId, hook.id, 7), newest.slice(0, 7), 'a small limit');
    const kept = await store.webhooks.deliveries(hook.appId, hook.id, 1000);
    t.ok(kept.length >= 100 && kept.length <= 130, `at least 100 kept (${kept.length})`);
    t.same(kept, newest.slice(0, kept.length), 'whatever is kept beyond them is the next newest');
    t.same(await store.webhooks.delivery(hook.appId, hook.id, all[129]!.id), all[129], 'the newest by id');
    t.same(await store.webhooks.delivery(hook.appId, hook.id, all[30]!.id), all[30], 'the 100th newest by id');
  });

  t.test('deliveries: deleting an endpoint (or recording for none) leaves no log', async (t) => {
    const store = await fresh(t);
    const hook = await hookIn(store);
    const kept = await hookIn(store, hook.appId);
    const gone = [attempt(hook, 1), attempt(hook, 2)];
    const stays = attempt(kept, 3);
    await store.webhooks.recordDeliveries([...gone, stays]);
    t.equal((await store.webhooks.deliveries(hook.appId, hook.id, 10)).length, 2);
    t.equal(await store.webhooks.delete(hook.appId, hook.id), 'deleted');
    t.same(await store.webhooks.deliveries(hook.appId, hook.id, 10), [], 'its log is forgotten');
    t.equal(await store.webhooks.delivery(hook.appId, hook.id, gone[0]!.id), undefined, 'and no attempt is found by id');
    await store.webhooks.recordDeliveries([attempt(hook, 4)]);
    t.same(await store.webhooks.deliveries(hook.appId, hook.id, 10), [], 'an attempt recorded after the delete (a racing dispatcher) is not listed');
    const never = endpoint(hook.appId);
    await store.webhooks.recordDeliveries([attempt(never, 5)]);
    t.same(await store.webhooks.deliveries(never.appId, never.id, 10), [], 'nor one for an endpoint that never was');
    t.same(await store.webhooks.deliveries(kept.appId, kept.id, 10), [stays], 'the other endpoint keeps its log');
  });
}
