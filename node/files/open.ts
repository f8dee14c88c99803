import { join } from 'node:path';
import type { Config, Logger } from '../../common/index.ts';
import { storedReply, type NodeStore } from '../store/index.ts';
import { deploymentLimits } from '../../common/attachments/index.ts';
import { Attachments } from './attachments.ts';
import { FileRules, type AttachmentSettingsSource } from './file-rules.ts';
import { ClamdScanner } from './malware-scan.ts';
import { StorageQuota, type QuotaUsage } from './quota.ts';
import { LocalObjectStore } from './local-store.ts';
import type { ObjectStore } from './object-store.ts';
import { S3ObjectStore } from './s3-store.ts';

/** Which object store ATTACHMENTS_STORE names, its empty default resolved (see the config schema). */
export function attachmentsStoreKind(config: Readonly<Config>): 'local' | 's3' | 'off' {
  if (config.ATTACHMENTS_STORE !== '') return config.ATTACHMENTS_STORE;
  if (config.STORE === 'embedded') return 'local';
  return config.S3_ENDPOINT ? 's3' : 'off';
}

/**
 * Opens the attachments' object store, or undefined when attachments are off. `publicUrl` is read
 * when a URL is signed: with NODE_PORT=0 the node's address is known only once it listens.
 */
export async function openObjectStore(config: Readonly<Config>, publicUrl: () => string): Promise<ObjectStore | undefined> {
  const kind = attachmentsStoreKind(config);
  if (kind === 'off') return undefined;
  if (kind === 'local') return LocalObjectStore.open({ dir: join(config.DATA_DIR, 'files'), publicUrl });
  if (!config.S3_ENDPOINT) throw new Error('ATTACHMENTS_STORE=s3 needs S3_ENDPOINT');
  return S3ObjectStore.open({
    endpoint: config.S3_ENDPOINT,
    ...(config.S3_PUBLIC_ENDPOINT ? { publicEndpoint: config.S3_PUBLIC_ENDPOINT } : {}),
    bucket: config.S3_BUCKET,
    region: config.S3_REGION,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    corsOrigins: config.CORS_ORIGINS.split(',').map((o) => o.trim()).filter((o) => o !== ''),
  });
}

/**
 * The node's attachments over `files` (and, on the embedded store, the checks of its signed
 * URLs' requests), their limits from the config, the chat store answering the sweeper. */
export interface AttachmentsWiring {
  appExists: (appId: string) => Promise<boolean>;
  /** Usage: attachment bytes stored changed. */
  storedBytes: (appId: string, bytes: number) => void;
  /**
   * Usage, for each application's limit: the attachment bytes it stores as the store has them, and
   * this node's counts not flushed yet (see StorageQuota); no limit when absent.
   */
  storedTotal?: QuotaUsage;
  /** Each application's attachment settings (the control store); the deployment's limits for all when absent. */
  settings?: AttachmentSettingsSource;
  /** How long a node trusts the settings it read when no change is announced (KEY_STATUS_TTL_MS). */
  settingsTtlMs: number;
  /** An upload finalized or refused here (see AttachmentsOptions.released). */
  released?: (appId: string, uploadId: string) => void;
  /** Whether this node sweeps now (a cluster's first live node); every node when absent. */
  sweepHere?: () => Promise<boolean>;
  /** Message and chat deletions carry their files' deletion in the outbox (FileDeletions). */
  deletionsInOutbox?: boolean;
  log: Logger;
  now: () => Date;
}

/** How long an application's stored-bytes figure is used before it is read again (nodes flush usage every USAGE_FLUSH_SECONDS). */
const QUOTA_FIGURE_TTL_MS = 5_000;

export function attachmentsOf(config: Readonly<Config>, store: NodeStore, files: ObjectStore, w: AttachmentsWiring): Attachments {
  const [host, port] = config.CLAMAV_ADDRESS.split(':');
  const attachments = new Attachments({
    store: files,
    ...(config.CLAMAV_ADDRESS ? { scanner: new ClamdScanner(host!, Number(port), config.CLAMAV_TIMEOUT_MS) } : {}),
    rules: new FileRules({ deployment: deploymentLimits(config), ...(w.settings ? { source: w.settings } : {}), ttlMs: w.settingsTtlMs }),
    limits: {
      uploadTtlMs: config.ATTACHMENT_UPLOAD_TTL_SECONDS * 1000,
      deleteDelayMs: config.ATTACHMENT_DELETE_DELAY_SECONDS * 1000,
    },
    checks: {
      message: async (appId, chatId, id) => {
        // A message of the chat, or a reply in one of its threads.
        const m = (await store.messages.get(appId, chatId, id)) ?? (await storedReply(store.messages, appId, chatId, id));
        return !m ? 'absent' : m.deletedAt !== undefined ? 'deleted' : m.hiddenAt !== undefined ? 'hidden' : 'live';
      },
      chatExists: async (appId, chatId) => (await store.chats.get(appId, chatId)) !== undefined,
      holder: (appId, chatId, uploadId) => store.messages.attachmentHolder(appId, chatId, uploadId),
      appExists: w.appExists,
    },
    log: w.log,
    now: w.now,
    storedBytes: w.storedBytes,
    ...(w.sweepHere ? { sweepHere: w.sweepHere } : {}),
    ...(w.deletionsInOutbox ? { deletionsInOutbox: true } : {}),
    ...(w.released ? { released: w.released } : {}),
    // Kept even when the deployment sets no total: an application's settings may set one.
    ...(w.storedTotal ? { quota: new StorageQuota({ usage: w.storedTotal, ttlMs: QUOTA_FIGURE_TTL_MS }) } : {}),
  });
  // The node route serves the embedded store's URLs: it asks the attachments whether a signed
  // request is still allowed (no PUT after finalize, no download of a hidden or deleted message's file).
  if (files instanceof LocalObjectStore) files.checkSignedRequests(attachments.signedRequestChecks());
  return attachments;
}
