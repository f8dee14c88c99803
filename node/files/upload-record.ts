import { ApiError } from '../../common/index.ts';
import type { Attachment } from './schemas.ts';

/**
 * An upload as its record object (`…/record.json`) keeps it: asked for, then finalized. `v: 2`
 * (every upload asked for now): its bytes are put at `…/upload` and finalize writes the checked
 * ones to `…/file`, which no signed URL names. `v: 1` (asked for before): both at `…/file`.
 */
export interface UploadRecord {
  v: 1 | 2;
  id: string;
  appId: string;
  chatId: string;
  uploaderId: string;
  name: string;
  size: number;
  declaredType?: string;
  createdAt: string;
  expiresAt: string;
  /** A multipart upload's id in the object store: its bytes come in parts (see partsOf). */
  multipartId?: string;
  /** Set by finalize: what a message carries. */
  attachment?: Attachment;
}

/**
 * How big each part of a multipart upload is, but the last: above S3's smallest (5 MiB), small
 * enough that an interrupted part costs little to put again.
 */
export const UPLOAD_PART_BYTES = 8 * 1024 * 1024;

/** The parts of a file of `size` bytes, in order. */
export function partsOf(size: number): { number: number; offset: number; size: number }[] {
  const count = Math.ceil(size / UPLOAD_PART_BYTES);
  return Array.from({ length: count }, (_, i) => ({ number: i + 1, offset: i * UPLOAD_PART_BYTES, size: Math.min(UPLOAD_PART_BYTES, size - i * UPLOAD_PART_BYTES) }));
}

/**
 * Keys: `a/{appId}/{chatId}/{uploadId}/` holds `record.json`, `upload` (the bytes as put, until
 * finalize), `file` (the checked bytes: what downloads read) and, for an image, `thumb`. All under
 * one prefix, so deleting the prefix deletes an upload whole.
 */
export const prefixOf = (r: { appId: string; chatId: string; id: string }) => `a/${r.appId}/${r.chatId}/${r.id}`;
/** Where a finalized attachment's bytes are: written by finalize only (for a `v: 2` record). */
export const fileKey = (r: { appId: string; chatId: string; id: string }) => `${prefixOf(r)}/file`;
/**
 * Where an upload's bytes are put (the key its signed PUT URLs and multipart upload name). Never
 * `fileKey` for a `v: 2` record: so a URL still valid after finalize cannot replace checked bytes.
 */
export const uploadKey = (r: { appId: string; chatId: string; id: string; v: 1 | 2 }) => (r.v === 1 ? fileKey(r) : `${prefixOf(r)}/upload`);

/**
 * The attachments of `records` when a send by `senderId` may carry them, else the refusal naming
 * the first that may not: each must be finalized, the sender's, not expired (even before the
 * sweeper deletes it, so no message is stored holding a file about to go: the sweep waits
 * ATTACHMENT_DELETE_DELAY_SECONDS past expiry), and held (`holders[i]`) by no message but
 * `messageId`.
 */
export function sendable(senderId: string, records: readonly (UploadRecord | undefined)[], holders: readonly (string | undefined)[], messageId: string | undefined, nowMs: number): Attachment[] | ApiError {
  for (const [i, record] of records.entries()) {
    const path = `/attachments/${i}`;
    const holder = holders[i];
    const notFound = () => new ApiError('ATTACHMENT_NOT_FOUND', `attachments[${i}] names no finalized upload of yours in this chat`, { errors: [{ path, message: 'no finalized upload of yours in this chat' }] });
    if (!record?.attachment || record.uploaderId !== senderId) return notFound();
    if (holder !== undefined && holder !== messageId) {
      return new ApiError('ATTACHMENT_IN_USE', `attachments[${i}] is already sent in message ${holder}: upload the file again to send it again`, { errors: [{ path, message: 'already sent in another message' }] });
    }
    if (Date.parse(record.expiresAt) <= nowMs) return notFound();
  }
  return records.map((r) => r!.attachment!);
}
