import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { ControlStore, UsageDelta } from '../../control/index.ts';

/** The UsageStore part of the control store conformance suite (see store-conformance.ts). */
export function usageStoreConformance(t: Test, fresh: (t: Test) => Promise<ControlStore>): void {
  const delta = (appId: string, d: Partial<UsageDelta>): UsageDelta => ({ appId, users: 0, chats: 0, messages: {}, keysUsed: {}, ...d });

  t.test('usage: an application never counted reads as zeros', async (t) => {
    const { usage } = await fresh(t);
    t.same(await usage.read(randomUUID(), ['2030-01-01']), { users: 0, chats: 0, messages: 0, fileBytes: 0, messagesByDay: {}, peakByDay: {} });
    t.same(await usage.keysLastUsed(randomUUID()), {});
  });

  t.test('usage: the deltas of several nodes and flushes add up; deletions count down', async (t) => {
    const { usage } = await fresh(t);
    const app = randomUUID();
    const other = randomUUID();
    await usage.record('n1', [delta(app, { users: 3, chats: 2, messages: { '2030-01-01': 5, '2030-01-02': 1 }, fileBytes: 5000 }), delta(other, { users: 7 })]);
    await usage.record('n2', [delta(app, { users: 1, chats: -1, messages: { '2030-01-02': 4 }, fileBytes: 700 })]);
    await usage.record('n1', [delta(app, { users: -1, messages: { '2030-01-03': 2 }, fileBytes: -1200 })]);
    const read = await usage.read(app, ['2030-01-01', '2030-01-02', '2030-01-04']);
    t.same(read, { users: 3, chats: 1, messages: 12, fileBytes: 4500, messagesByDay: { '2030-01-01': 5, '2030-01-02': 5 }, peakByDay: {} }, 'totals count every day (stored bytes up and down); per-day figures only the days asked');
    t.equal((await usage.read(other, [])).users, 7, 'applications are counted apart');
  });

  t.test('usage: the daily peak is the highest sample of any node; current is the newest sample', async (t) => {
    const { usage } = await fresh(t);
    const app = randomUUID();
    await usage.record('n1', [delta(app, { concurrent: { peaks: { '2030-01-01': 4 }, current: 2, at: '2030-01-01T10:00:02.000Z' } })]);
    await usage.record('n2', [delta(app, { concurrent: { peaks: { '2030-01-01': 9, '2030-01-02': 1 }, current: 1, at: '2030-01-02T00:00:05.000Z' } })]);
    // A node that restarted, or a late flush, writes a lower peak and an older sample: neither wins.
    await usage.record('n1', [delta(app, { concurrent: { peaks: { '2030-01-01': 3 }, current: 6, at: '2030-01-01T23:59:00.000Z' } })]);
    const read = await usage.read(app, ['2030-01-01', '2030-01-02']);
    t.same(read.peakByDay, { '2030-01-01': 9, '2030-01-02': 1 });
    t.same(read.current, { users: 1, at: '2030-01-02T00:00:05.000Z' });
  });

  t.test('usage: a key keeps its latest use whatever order flushes land in; forget clears all', async (t) => {
    const { usage } = await fresh(t);
    const app = randomUUID();
    const [k1, k2] = [randomUUID(), randomUUID()];
    await usage.record('n1', [delta(app, { keysUsed: { [k1]: '2030-01-01T10:00:00.000Z' }, users: 1, messages: { '2030-01-01': 1 }, concurrent: { peaks: { '2030-01-01': 1 }, current: 1, at: '2030-01-01T10:00:00.000Z' } })]);
    await usage.record('n2', [delta(app, { keysUsed: { [k1]: '2030-01-01T09:00:00.000Z', [k2]: '2030-01-01T08:00:00.000Z' } })]);
    t.same(await usage.keysLastUsed(app), { [k1]: '2030-01-01T10:00:00.000Z', [k2]: '2030-01-01T08:00:00.000Z' });
    await usage.forget(app);
    t.same(await usage.keysLastUsed(app), {});
    t.same(await usage.read(app, ['2030-01-01']), { users: 0, chats: 0, messages: 0, fileBytes: 0, messagesByDay: {}, peakByDay: {} });
  });
}
