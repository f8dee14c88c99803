import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { BeforeSendHook, ControlStore } from '../../control/index.ts';
import { NOW } from '../helpers/fixed-clock.ts';

/** The BeforeSendStore part of the control store conformance suite (see store-conformance.ts). */
export function beforeSendStoreConformance(t: Test, fresh: (t: Test) => Promise<ControlStore>): void {
  const hook = (appId: string, over: Partial<BeforeSendHook> = {}): BeforeSendHook => ({
    appId,
    url: 'https://hooks.example.com/before-send',
    timeoutMs: 500,
    failurePolicy: 'open',
    secret: `whsec_${randomUUID()}`,
    createdAt: NOW,
    updatedAt: NOW,
    ...over,
  });

  t.test('before-send: create, read back exactly, one per application', async (t) => {
    const { beforeSend } = await fresh(t);
    const app = randomUUID();
    const h = hook(app, { timeoutMs: 150, failurePolicy: 'closed' });
    t.equal(await beforeSend.get(app), undefined, 'none at first');
    t.equal(await beforeSend.create(h), 'created');
    t.same(await beforeSend.get(app), h, 'every field');
    t.equal(await beforeSend.create(hook(app, { url: 'https://other.example.com/' })), 'exists', 'a second create is refused');
    t.same(await beforeSend.get(app), h, '…and changes nothing');
    t.equal(await beforeSend.get(randomUUID()), undefined, 'another application has none');
  });

  t.test('before-send: of concurrent creates exactly one wins', async (t) => {
    const { beforeSend } = await fresh(t);
    const app = randomUUID();
    const candidates = Array.from({ length: 6 }, (_, i) => hook(app, { secret: `whsec_${i}` }));
    const results = await Promise.all(candidates.map((c) => beforeSend.create(c)));
    t.equal(results.filter((r) => r === 'created').length, 1);
    const winner = candidates[results.indexOf('created')];
    t.same(await beforeSend.get(app), winner, 'the stored hook is the winner’s');
  });

  t.test('before-send: update replaces the record; delete removes it; both say when there is none', async (t) => {
    const { beforeSend } = await fresh(t);
    const app = randomUUID();
    const h = hook(app);
    t.equal(await beforeSend.update(h), 'not-found', 'no update without a create');
    t.equal(await beforeSend.get(app), undefined, '…and nothing is stored');
    await beforeSend.create(h);
    const changed: BeforeSendHook = { ...h, url: 'https://moved.example.com/x', timeoutMs: 2000, failurePolicy: 'closed', secret: 'whsec_new', updatedAt: '2030-01-03T00:00:00.000Z' };
    t.equal(await beforeSend.update(changed), 'updated');
    t.same(await beforeSend.get(app), changed);
    t.equal(await beforeSend.delete(app), 'deleted');
    t.equal(await beforeSend.get(app), undefined);
    t.equal(await beforeSend.delete(app), 'not-found');
    t.equal(await beforeSend.update(changed), 'not-found', 'a deleted hook is not brought back by an update');
    t.equal(await beforeSend.create(hook(app)), 'created', 'a new one may be set after a delete');
  });
}
