import { ApiError } from '../../common/index.ts';
import type { ObjectStore, SignedRequest } from './object-store.ts';
import type { UploadPart } from './schemas.ts';
import { partsOf, uploadKey, type UploadRecord } from './upload-record.ts';

/** How long a signed upload URL works (at most: an upload's own time may be shorter). */
export const UPLOAD_URL_SECONDS = 15 * 60;

const wire = (r: SignedRequest) => ({ ...r, expiresAt: r.expiresAt.toISOString() });

/**
 * Where an upload's bytes go and what the store has of them: one signed PUT for the whole file,
 * or one per part for a multipart upload, which resumes: its state names the parts received and
 * gives fresh URLs for the others. URLs are signed for at most UPLOAD_URL_SECONDS and never past
 * the upload's own expiry.
 */
export class UploadTransfer {
  constructor(
    private readonly store: ObjectStore,
    private readonly now: () => Date,
  ) {}

  /** The requests that put the bytes of `record`, none of them stored yet (`received`: the part numbers that are). */
  async requests(record: UploadRecord, received: ReadonlySet<number> = new Set()): Promise<{ upload?: ReturnType<typeof wire>; parts?: UploadPart[] }> {
    const expiresInSeconds = this.urlSeconds(record);
    if (!record.multipartId) {
      const put = await this.store.presignPut(uploadKey(record), { size: record.size, contentType: record.declaredType ?? 'application/octet-stream', expiresInSeconds });
      return { upload: wire(put) };
    }
    const parts = await Promise.all(
      partsOf(record.size).map(async (p): Promise<UploadPart> => {
        if (received.has(p.number)) return { ...p, received: true };
        return { ...p, received: false, upload: wire(await this.store.presignPart(uploadKey(record), record.multipartId!, p.number, { size: p.size, expiresInSeconds })) };
      }),
    );
    return { parts };
  }

  /** What the store has of an unfinalized upload: the bytes received, and fresh requests for the rest. */
  async state(record: UploadRecord): Promise<{ received: number; upload?: ReturnType<typeof wire>; parts?: UploadPart[] }> {
    const head = await this.store.head(uploadKey(record));
    if (head?.size === record.size) return record.multipartId ? { received: head.size, parts: partsOf(record.size).map((p) => ({ ...p, received: true })) } : { received: head.size };
    if (!record.multipartId) return { received: 0, ...(await this.requests(record)) };
    const received = await this.receivedParts(record);
    const { parts } = await this.requests(record, received);
    return { received: parts!.filter((p) => p.received).reduce((n, p) => n + p.size, 0), parts: parts! };
  }

  /**
   * Joins a multipart upload's parts into its file once every one is stored (UPLOAD_INCOMPLETE
   * naming those that are not). Safe to run twice, or after a run that stopped midway: a file
   * already whole is left as it is.
   */
  async assemble(record: UploadRecord): Promise<ApiError | undefined> {
    if (!record.multipartId) return undefined;
    const key = uploadKey(record);
    if ((await this.store.head(key))?.size === record.size) return undefined;
    const received = await this.receivedParts(record);
    const missing = partsOf(record.size).filter((p) => !received.has(p.number));
    if (missing.length > 0) {
      return new ApiError('UPLOAD_INCOMPLETE', `${missing.length} of the upload's parts are not stored yet (${missing.map((p) => p.number).slice(0, 10).join(', ')}): put them, then finalize again`, {
        errors: missing.slice(0, 20).map((p) => ({ path: `/parts/${p.number - 1}`, message: `part ${p.number} (${p.size} bytes at ${p.offset}) is not stored` })),
      });
    }
    await this.store.completeMultipart(key, record.multipartId, partsOf(record.size).map((p) => p.number)).catch(async (error: unknown) => {
      // Another finalize completed it meanwhile: the file is whole, which is all this wanted.
      if ((await this.store.head(key))?.size !== record.size) throw error;
    });
    return undefined;
  }

  /** The parts stored at their expected size (a part of another size is not one). */
  private async receivedParts(record: UploadRecord): Promise<Set<number>> {
    const expected = new Map(partsOf(record.size).map((p) => [p.number, p.size]));
    const stored = (await this.store.listParts(uploadKey(record), record.multipartId!)) ?? [];
    return new Set(stored.filter((p) => expected.get(p.number) === p.size).map((p) => p.number));
  }

  private urlSeconds(record: UploadRecord): number {
    return Math.max(1, Math.min(UPLOAD_URL_SECONDS, Math.floor((Date.parse(record.expiresAt) - this.now().getTime()) / 1000)));
  }
}
