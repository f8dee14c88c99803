import type { Database } from 'lmdb';
import type { AttachmentSettingsStore, StoredAttachmentSettings } from '../types/attachment-settings.ts';
import type { Key } from './shared.ts';

/** The embedded attachment settings: ['s', app]. Each put resolves once synced (see LmdbControlStore.open). */
export class LmdbAttachmentSettings implements AttachmentSettingsStore {
  constructor(private readonly db: Database<unknown, Key>) {}

  async get(appId: string): Promise<StoredAttachmentSettings | undefined> {
    return this.db.get(['s', appId]) as StoredAttachmentSettings | undefined;
  }

  async set(record: StoredAttachmentSettings): Promise<void> {
    await this.db.put(['s', record.appId], record);
  }

  async delete(appId: string): Promise<void> {
    await this.db.remove(['s', appId]);
  }
}
