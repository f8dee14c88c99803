import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { Leases } from '../../node/bus/index.ts';
import { eventually, type OpenedLeases } from './bus-helpers.ts';

/**
 * The behaviour every Leases store must show (node/bus/leases.ts). `open(n)` gives n handles on
 * one fresh namespace, one per simulated node (the same object for the in-memory store, separate
 * connections for Redis).
 */
export function leasesConformance(t: Test, name: string, open: (n: number) => Promise<OpenedLeases>): void {
  const withStores = (title: string, n: number, body: (t: Test, stores: Leases[]) => Promise<void>) =>
    t.test(`${name} leases: ${title}`, async (t) => {
      const opened = await open(n);
      t.teardown(opened.close);
      await body(t, opened.stores);
    });

  withStores('renew and remove report the live count before and after; live() lists members with values', 2, async (t, [a, b]) => {
    const key = randomUUID();
    t.same(await a!.renew(key, [{ member: 'n2', value: 'two' }], 10_000), { before: 0, after: 1 });
    t.same(await b!.renew(key, [{ member: 'n1', value: '' }, { member: 'n3', value: 'three' }], 10_000), { before: 1, after: 3 });
    t.same(await a!.renew(key, [{ member: 'n2', value: 'two, again' }], 10_000), { before: 3, after: 3 }, 'renewing a member does not add one');
    t.same(await b!.live(key), [
      { member: 'n1', value: '' },
      { member: 'n2', value: 'two, again' },
      { member: 'n3', value: 'three' },
    ]);
    t.equal(await a!.count(key), 3);
    t.same(await a!.remove(key, ['n1', 'absent']), { before: 3, after: 2 });
    t.same(await b!.remove(key, ['n2', 'n3']), { before: 2, after: 0 });
    t.same(await a!.remove(key, ['n2']), { before: 0, after: 0 }, 'removing from an empty key is a no-op');
    t.same(await a!.live(key), []);
    t.same(await a!.live(randomUUID()), [], 'an unknown key is empty');
  });

  withStores('a member expires ttl after its last renewal; expired members are neither counted nor listed', 2, async (t, [a, b]) => {
    const key = randomUUID();
    await a!.renew(key, [{ member: 'short', value: 's' }], 300);
    await a!.renew(key, [{ member: 'long', value: 'l' }], 10_000);
    t.equal(await b!.count(key), 2);
    const waited = await eventually('the short lease expires', async () => (await b!.count(key)) === 1, 3_000);
    t.ok(waited >= 200, `not before its ttl (${waited} ms)`);
    t.same(await b!.live(key), [{ member: 'long', value: 'l' }]);
    t.same(await a!.renew(key, [{ member: 'short', value: 's' }], 300), { before: 1, after: 2 }, 'an expired member counts as absent');
  });

  withStores('concurrent calls: exactly one sees a key become live, exactly one sees it end', 4, async (t, stores) => {
    const key = randomUUID();
    const renewals = await Promise.all(stores.flatMap((s, i) => [0, 1, 2].map((j) => s.renew(key, [{ member: `${i}/${j}`, value: '' }], 10_000))));
    t.equal(renewals.filter((c) => c.before === 0).length, 1, 'one renewal found the key empty');
    t.equal(await stores[0]!.count(key), 12);
    const removals = await Promise.all(stores.flatMap((s, i) => [0, 1, 2].map((j) => s.remove(key, [`${i}/${j}`]))));
    t.equal(removals.filter((c) => c.before > 0 && c.after === 0).length, 1, 'one removal emptied it');
  });

  withStores('keys are independent', 1, async (t, [a]) => {
    const [k1, k2] = [randomUUID(), randomUUID()];
    await a!.renew(k1, [{ member: 'm', value: '1' }], 10_000);
    t.equal(await a!.count(k2), 0);
    t.same(await a!.renew(k2, [{ member: 'm', value: '2' }], 10_000), { before: 0, after: 1 });
    await a!.remove(k1, ['m']);
    t.same(await a!.live(k2), [{ member: 'm', value: '2' }]);
    await a!.remove(k2, ['m']);
  });
}
