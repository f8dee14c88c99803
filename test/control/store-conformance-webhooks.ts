import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { ControlStore, WebhookEndpoint } from '../../control/index.ts';
import { NOW } from '../helpers/fixed-clock.ts';

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
}
