import { ApiError } from '../../common/index.ts';
import type { SignedRequestCheck } from './local-store.ts';
import type { SweepChecks } from './sweeper.ts';
import type { UploadRecords } from './upload-records.ts';

/** An attachment key: `a/{appId}/{chatId}/{uploadId}/{name}` (see upload-record.ts). */
const ATTACHMENT_KEY = /^a\/([^/]+)\/([^/]+)\/([^/]+)\/([^/]+)$/;

const gone = () => new ApiError('FILE_NOT_FOUND', 'the file is gone or no longer shown: its message was hidden or deleted, or its chat deleted');

/**
 * The attachments' checks of requests to their signed URLs on the embedded store:
 * - a PUT to an upload that is finalized is refused (409 UPLOAD_FINALIZED), and one to an upload
 *   that is gone (expired, refused, deleted) too (404 UPLOAD_NOT_FOUND): so bytes never land
 *   after finalize, nor under a prefix already deleted;
 * - a GET of a file or thumbnail is served only while what `access` signed it for still holds:
 *   the chat exists, and the message that carries the file is shown (not hidden pending review,
 *   not deleted), or, for an upload not sent yet (signed for its uploader only), it has not
 *   expired. Else 404 FILE_NOT_FOUND, as for a file already deleted.
 * Membership is checked when a URL is signed (at most DOWNLOAD_URL_SECONDS before), not here.
 * A finalized record is read from memory; the holder, message and chat are store reads.
 */
export function signedRequestChecks(records: UploadRecords, checks: SweepChecks, now: () => Date): SignedRequestCheck {
  return async (method, key) => {
    const parts = ATTACHMENT_KEY.exec(key);
    if (!parts) return method === 'GET' ? gone() : new ApiError('UPLOAD_NOT_FOUND', 'no such upload');
    const [, appId = '', chatId = '', uploadId = '', name = ''] = parts;
    const record = await records.read(appId, chatId, uploadId);
    if (method === 'PUT') {
      if (!record) return new ApiError('UPLOAD_NOT_FOUND', 'this upload is gone (expired, refused or deleted): ask for a new one');
      if (record.attachment) return new ApiError('UPLOAD_FINALIZED', 'this upload is finalized: its bytes can no longer be replaced (upload the file again to send other bytes)');
      return undefined;
    }
    if (!record?.attachment || (name !== 'file' && name !== 'thumb')) return gone();
    const [holderId, chat] = await Promise.all([checks.holder(appId, chatId, uploadId), checks.chatExists(appId, chatId)]);
    if (!chat) return gone();
    if (holderId === undefined) return Date.parse(record.expiresAt) <= now().getTime() ? gone() : undefined;
    return (await checks.message(appId, chatId, holderId)) === 'live' ? undefined : gone();
  };
}
