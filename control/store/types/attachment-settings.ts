import type { AttachmentSettings } from '../../../common/attachments/index.ts';

/** An application's attachment settings as stored: what was set, and when. */
export interface StoredAttachmentSettings {
  appId: string;
  settings: AttachmentSettings;
  updatedAt: string;
}

/**
 * Each application's attachment settings (README, "Attachments"): one record per application,
 * replaced whole by each set (the last set wins), removed with the application.
 */
export interface AttachmentSettingsStore {
  get(appId: string): Promise<StoredAttachmentSettings | undefined>;
  set(record: StoredAttachmentSettings): Promise<void>;
  /** Idempotent: removing what is absent succeeds. */
  delete(appId: string): Promise<void>;
}
