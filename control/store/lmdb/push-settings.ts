import type { Database, RootDatabase } from 'lmdb';
import { PUSH_DELIVERIES_KEPT, type PushSettings } from '../../../common/push/index.ts';
import { assemblePushSettings, type StoredPushPart } from '../push-settings-parts.ts';
import type { PushDeliveryRecord, PushPartValues, PushSettingsStore, PushWebPart } from '../types/push-settings.ts';
import { definedFields, END, type Key } from './shared.ts';

const PARTS = ['options', 'webPush', 'apns', 'fcm'] as const;

/**
 * The embedded push settings: ['p', app, part] → {value, updatedAt}. Each check and its write are
 * one write transaction.
 *
 * The delivery log: ['pd', app, at, id] → the attempt, read backwards for newest first (by `at`,
 * then id, both descending); a record written again lands on its own key. A write keeps the newest
 * PUSH_DELIVERIES_KEPT of each application it touched, in its transaction: the trim skips that
 * many keys and removes what follows, so it costs O(kept + written). A provider's listing walks the
 * application's kept attempts (never more than PUSH_DELIVERIES_KEPT) until it has `limit`.
 * Attempts a node records for an application deleted a moment before stay (at most kept of them),
 * never listed: application ids are never used again.
 */
export class LmdbPushSettings implements PushSettingsStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Database<unknown, Key>,
  ) {}

  async get(appId: string): Promise<PushSettings | undefined> {
    const parts = new Map<string, StoredPushPart>();
    for (const part of PARTS) {
      const stored = this.db.get(['p', appId, part]) as StoredPushPart | undefined;
      if (stored) parts.set(part, stored);
    }
    return assemblePushSettings(appId, parts);
  }

  async put<P extends keyof PushPartValues>(appId: string, part: P, value: PushPartValues[P] | undefined, updatedAt: string): Promise<void> {
    if (value === undefined) await this.db.remove(['p', appId, part]);
    else await this.db.put(['p', appId, part], { value, updatedAt } satisfies StoredPushPart);
  }

  createWebPush(appId: string, value: PushWebPart, updatedAt: string): Promise<'created' | 'exists'> {
    return this.root.transaction(() => {
      if (this.db.get(['p', appId, 'webPush']) !== undefined) return 'exists' as const;
      this.db.put(['p', appId, 'webPush'], { value, updatedAt } satisfies StoredPushPart);
      return 'created' as const;
    });
  }

  updateWebPush(appId: string, subject: string | undefined, updatedAt: string): Promise<'updated' | 'not-found'> {
    return this.root.transaction(() => {
      const stored = this.db.get(['p', appId, 'webPush']) as StoredPushPart | undefined;
      if (stored === undefined) return 'not-found' as const;
      if (subject === undefined) this.db.remove(['p', appId, 'webPush']);
      else this.db.put(['p', appId, 'webPush'], { value: { ...(stored.value as PushWebPart), subject }, updatedAt } satisfies StoredPushPart);
      return 'updated' as const;
    });
  }

  async recordDeliveries(records: PushDeliveryRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.root.transaction(() => {
      for (const record of records) this.db.put(['pd', record.appId, record.at, record.id], definedFields(record));
      for (const appId of new Set(records.map((r) => r.appId))) {
        const older = this.db.getKeys({ start: ['pd', appId, END], end: ['pd', appId], reverse: true, offset: PUSH_DELIVERIES_KEPT });
        for (const key of [...older]) this.db.remove(key);
      }
    });
  }

  async deliveries(appId: string, provider: PushDeliveryRecord['provider'] | undefined, limit: number): Promise<PushDeliveryRecord[]> {
    const want = Math.min(limit, PUSH_DELIVERIES_KEPT);
    if (want <= 0) return [];
    const out: PushDeliveryRecord[] = [];
    // Bounded by the trim: at most PUSH_DELIVERIES_KEPT entries are there to walk.
    for (const { value } of this.db.getRange({ start: ['pd', appId, END], end: ['pd', appId], reverse: true, limit: provider ? PUSH_DELIVERIES_KEPT : want })) {
      const record = value as PushDeliveryRecord;
      if (provider && record.provider !== provider) continue;
      out.push(record);
      if (out.length === want) break;
    }
    return out;
  }

  async delete(appId: string): Promise<void> {
    await this.root.transaction(() => {
      for (const part of PARTS) this.db.remove(['p', appId, part]);
      for (const key of [...this.db.getKeys({ start: ['pd', appId], end: ['pd', appId, END] })]) this.db.remove(key);
    });
  }
}
