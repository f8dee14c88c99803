import t from 'tap';
import { channelOf, MemoryBroker, MemoryBus, MemoryLeases } from '../../node/bus/index.ts';
import { busConformance } from './bus-conformance.ts';
import { recordingLog, type OpenedLeases } from './bus-helpers.ts';
import { leasesConformance } from './bus-leases-conformance.ts';
import { membershipConformance } from './bus-membership-conformance.ts';
import { presenceConformance } from './presence-conformance.ts';

// The in-process backends, as the standalone deployment uses them, and as several nodes of one
// process share them: one broker, one lease store.

busConformance(t, 'memory', async (n) => {
  const broker = new MemoryBroker();
  const buses = Array.from({ length: n }, (_, i) => new MemoryBus(broker, { nodeId: `node-${i}`, log: recordingLog() }));
  return {
    buses,
    subscribers: async (topic) => broker.subscribers(channelOf('', topic)),
    close: async () => void (await Promise.all(buses.map((b) => b.close()))),
  };
});

const openLeases = async (n: number): Promise<OpenedLeases> => {
  const shared = new MemoryLeases();
  return { stores: Array.from({ length: n }, () => shared), close: () => shared.close() };
};
leasesConformance(t, 'memory', openLeases);
presenceConformance(t, 'memory', openLeases);
membershipConformance(t, 'memory', openLeases);

t.test('memory: a broker that is down refuses publications; they are counted as lost, not thrown', async (t) => {
  const broker = new MemoryBroker();
  const [a, b] = [new MemoryBus(broker, { nodeId: 'a' }), new MemoryBus(broker, { nodeId: 'b' })];
  const got: string[] = [];
  b.subscribe({ kind: 'control' }, (p) => void got.push(String(p)));
  broker.up = false;
  a.publish({ kind: 'control' }, 'lost');
  broker.up = true;
  a.publish({ kind: 'control' }, 'delivered');
  await new Promise((resolve) => queueMicrotask(() => resolve(undefined)));
  t.same(got, ['delivered']);
  t.equal(a.stats().publishFailures, 1);
  await Promise.all([a.close(), b.close()]);
});

t.test('memory leases: time is the injected clock’s', async (t) => {
  let now = 1_000;
  const leases = new MemoryLeases(() => now);
  await leases.renew('k', [{ member: 'm', value: '' }], 100);
  now = 1_099;
  t.equal(await leases.count('k'), 1);
  now = 1_100;
  t.equal(await leases.count('k'), 0, 'expired exactly ttl after the renewal');
});
