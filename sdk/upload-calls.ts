import { ChatStateError } from './errors.ts';
import type { RequestOptions } from './http.ts';
import type { Attachment } from './types.ts';
import { MULTIPART_FROM_BYTES, putMissing, withRetries, type UploadTarget } from './upload.ts';

type Call = <T>(path: string, init?: Omit<RequestOptions, 'token'>) => Promise<T>;
const enc = encodeURIComponent;

export interface UploadOptions {
  /** The file's name as people see it; default: the File's own name. */
  name?: string;
  /** Its MIME type; default: the Blob's own. The service sniffs the real one from the bytes. */
  type?: string;
  /** Called as bytes go out: in a browser as they are sent (XMLHttpRequest's progress), in Node as each 64 KiB of the streamed body is taken by fetch, elsewhere at the start and the end of each PUT. */
  onProgress?: (sent: number, total: number) => void;
  /** Called once the upload exists: keep its id to finish an interrupted upload with `resumeUpload`. */
  onUploadId?: (uploadId: string) => void;
}

/** Where an upload stands (`GET …/uploads/{uploadId}`). */
interface UploadState extends UploadTarget {
  uploadId: string;
  size: number;
  finalized: boolean;
  attachment?: Attachment;
  received: number;
}

/**
 * A file's way into a chat (README, "Attachments"): ask for an upload, put the bytes where the
 * service says (in parts past 8 MiB), finalize; and finishing one that was interrupted. ChatClient
 * delegates here.
 */
export class UploadCalls {
  constructor(
    private readonly call: Call,
    private readonly fetchImpl: typeof fetch,
  ) {}

  /**
   * Uploads a file to a chat and finalizes it: resolves with the attachment, whose `id` a send
   * then carries (`send(chatId, '', {attachments: [a.id]})`). The bytes go straight to where the
   * service says (the node, or its S3 service). Each step is retried while the service answers
   * `UNAVAILABLE` (its object store is down) or cannot be reached, up to 5 attempts over about 8 s.
   * Refused: `ChatApiError` with `FILE_TOO_LARGE` or `STORAGE_QUOTA_EXCEEDED` (before any byte is
   * sent) or `FILE_TYPE_REFUSED`. A file over 8 MiB goes in parts of 8 MiB, each retried on its
   * own; one interrupted past the retries is finished by `resumeUpload` with the id `onUploadId` gave.
   */
  async uploadFile(chatId: string, file: Blob | Uint8Array, options: UploadOptions = {}): Promise<Attachment> {
    const blob = file instanceof Uint8Array ? new Blob([file as Uint8Array<ArrayBuffer>], { type: options.type ?? 'application/octet-stream' }) : file;
    const name = options.name ?? (typeof File !== 'undefined' && blob instanceof File ? blob.name : 'file');
    const type = options.type ?? (blob.type || undefined);
    const multipart = blob.size > MULTIPART_FROM_BYTES;
    const asked = await withRetries(() =>
      this.call<UploadTarget & { uploadId: string }>(`api/chats/${enc(chatId)}/uploads`, {
        method: 'POST',
        body: { name, size: blob.size, ...(type ? { type } : {}), ...(multipart ? { multipart: true } : {}) },
      }),
    );
    options.onUploadId?.(asked.uploadId);
    return this.finishUpload(chatId, asked.uploadId, asked, blob, options.onProgress);
  }

  /**
   * Finishes an upload that was interrupted (a lost connection, a closed tab): asks the service what
   * it has, puts only what is missing of `file` (the same bytes as before), and finalizes. An upload
   * already finalized resolves with its attachment at once. Refused: `UPLOAD_NOT_FOUND` once it
   * expired (start again with `uploadFile`).
   */
  async resumeUpload(chatId: string, uploadId: string, file: Blob | Uint8Array, options: Pick<UploadOptions, 'onProgress'> = {}): Promise<Attachment> {
    const blob = file instanceof Uint8Array ? new Blob([file as Uint8Array<ArrayBuffer>]) : file;
    const state = await withRetries(() => this.uploadState(chatId, uploadId));
    if (state.attachment) return state.attachment;
    if (state.size !== blob.size) throw new ChatStateError(`this upload is of ${state.size} bytes, not ${blob.size}: resume it with the same file`);
    return this.finishUpload(chatId, uploadId, state, blob, options.onProgress);
  }

  private async finishUpload(chatId: string, uploadId: string, target: UploadTarget, blob: Blob, onProgress: UploadOptions['onProgress']): Promise<Attachment> {
    await putMissing(target, blob, onProgress, this.fetchImpl, () => this.uploadState(chatId, uploadId));
    return withRetries(() => this.call<Attachment>(`api/chats/${enc(chatId)}/uploads/${enc(uploadId)}/finalize`, { method: 'POST' }));
  }

  private uploadState(chatId: string, uploadId: string): Promise<UploadState> {
    return this.call<UploadState>(`api/chats/${enc(chatId)}/uploads/${enc(uploadId)}`);
  }

}
