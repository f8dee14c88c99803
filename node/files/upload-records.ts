import { RecentMap } from '../../common/cache/index.ts';
import type { ObjectStore } from './object-store.ts';
import { prefixOf, type UploadRecord } from './upload-record.ts';

/** Finalized upload records a node keeps in memory (about 500 bytes each). */
const MAX_REMEMBERED_RECORDS = 10_000;

/**
 * The upload records (`…/record.json`) in the object store, finalized ones also in memory.
 *
 * Finalized records never change again, so a copy is as good as the object: the send that carries
 * an upload, usually soon after its finalize on the same node, and the downloads of its file read
 * no object. A record's files may be deleted meanwhile (its upload expired, its message deleted):
 * a send is then refused by the record's expiry or by the holder, as without the copy. Bounded,
 * oldest first.
 */
export class UploadRecords {
  private readonly finalized = new RecentMap<string, UploadRecord>(MAX_REMEMBERED_RECORDS);

  constructor(private readonly store: ObjectStore) {}

  /** An upload's record, finalized ones from memory unless `fresh`. */
  async read(appId: string, chatId: string, uploadId: string, fresh = false): Promise<UploadRecord | undefined> {
    const key = `a/${appId}/${chatId}/${uploadId}/record.json`;
    const known = fresh ? undefined : this.finalized.get(key);
    if (known) return known;
    const bytes = await this.store.read(key);
    const record = bytes ? (JSON.parse(Buffer.from(bytes).toString('utf8')) as UploadRecord) : undefined;
    if (record?.attachment) this.remember(key, record);
    return record;
  }

  async write(record: UploadRecord): Promise<void> {
    const key = `${prefixOf(record)}/record.json`;
    await this.store.put(key, Buffer.from(JSON.stringify(record)), 'application/json');
    if (record.attachment) this.remember(key, record);
  }

  private remember(key: string, record: UploadRecord): void {
    this.finalized.set(key, record);
  }
}
