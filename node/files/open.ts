import { join } from 'node:path';
import type { Config } from '../../common/index.ts';
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
  });
}
