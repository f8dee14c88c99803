import type { Attachment } from './schemas.ts';

/** An upload as its record object (`…/record.json`) keeps it: asked for, then finalized. */
export interface UploadRecord {
  v: 1;
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

/** Keys: `a/{appId}/{chatId}/{uploadId}/` holds `record.json`, `file` and, for an image, `thumb`. */
export const prefixOf = (r: { appId: string; chatId: string; id: string }) => `a/${r.appId}/${r.chatId}/${r.id}`;
export const fileKey = (r: { appId: string; chatId: string; id: string }) => `${prefixOf(r)}/file`;
