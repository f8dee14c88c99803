import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { ControlStore, StoredAttachmentSettings } from '../../control/index.ts';
import { NOW } from '../helpers/fixed-clock.ts';

/** The AttachmentSettingsStore part of the control store conformance suite (see store-conformance.ts). */
export function attachmentSettingsStoreConformance(t: Test, fresh: (t: Test) => Promise<ControlStore>): void {
  t.test('attachment settings: set, read back exactly, replaced whole, per application, deleted', async (t) => {
    const { attachmentSettings } = await fresh(t);
    const app = randomUUID();
    const other = randomUUID();
    t.equal(await attachmentSettings.get(app), undefined, 'none at first');
    const first: StoredAttachmentSettings = { appId: app, settings: { maxFileBytes: 1000, maxTotalBytes: 5_000_000_000_000, allowedTypes: ['image/*', 'application/pdf'], refusedTypes: [] }, updatedAt: NOW };
    await attachmentSettings.set(first);
    t.same(await attachmentSettings.get(app), first, 'every field, a total past 2^32 included');
    t.equal(await attachmentSettings.get(other), undefined, 'another application has none');
    const second: StoredAttachmentSettings = { appId: app, settings: { refusedTypes: ['video/*'] }, updatedAt: '2026-01-02T00:00:00.000Z' };
    await attachmentSettings.set(second);
    t.same(await attachmentSettings.get(app), second, 'a set replaces the whole record: fields it omits are gone');
    await attachmentSettings.set({ appId: other, settings: {}, updatedAt: NOW });
    await attachmentSettings.delete(app);
    t.equal(await attachmentSettings.get(app), undefined, 'deleted');
    t.same(await attachmentSettings.get(other), { appId: other, settings: {}, updatedAt: NOW }, "another application's are kept");
    await attachmentSettings.delete(app);
    t.pass('deleting what is absent succeeds');
  });

  t.test('attachment settings: of concurrent sets one whole record wins', async (t) => {
    const { attachmentSettings } = await fresh(t);
    const app = randomUUID();
    const candidates = Array.from({ length: 6 }, (_, i): StoredAttachmentSettings => ({ appId: app, settings: { maxFileBytes: i + 1, refusedTypes: [`application/x-${i}`] }, updatedAt: NOW }));
    await Promise.all(candidates.map((c) => attachmentSettings.set(c)));
    const stored = await attachmentSettings.get(app);
    t.ok(candidates.some((c) => JSON.stringify(c) === JSON.stringify(stored)), 'the stored record is one of those set, never a mix');
  });
}
