import type { Database, RootDatabase } from 'lmdb';
import type { PushSettings } from '../../../common/push/index.ts';
import { assemblePushSettings, type StoredPushPart } from '../push-settings-parts.ts';
import type { PushPartValues, PushSettingsStore, PushWebPart } from '../types/push-settings.ts';
import type { Key } from './shared.ts';

const PARTS = ['options', 'webPush', 'apns', 'fcm'] as const;

/** The embedded push settings: ['p', app, part] → {value, updatedAt}. Each check and its write are one write transaction. */
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

  async delete(appId: string): Promise<void> {
    await this.root.transaction(() => {
      for (const part of PARTS) this.db.remove(['p', appId, part]);
    });
  }
}
