import { ApiError, defineRoute, isApiError, type AnyRoute } from '../../common/index.ts';
import type { NodeContext } from '../context.ts';
import { Attachment, AttachmentAccess, AttachmentParams, CreateUploadBody, Upload, UploadParams, UploadState } from '../files/index.ts';
import { ChatParams } from './schemas.ts';

const reply = <T>(status: number, value: T | ApiError) => (isApiError(value) ? value : { status, body: value });
const off = () => new ApiError('UNAVAILABLE', 'this deployment stores no attachments (ATTACHMENTS_STORE=off)');

/**
 * Attachments (README, "Attachments"): ask for an upload, put its bytes to the URL it gives,
 * finalize it, then ask for signed URLs of the file. Every route checks that the caller is a member
 * of the chat, at every call: a member who leaves gets no new URL.
 */
export function attachmentRoutes(ctx: NodeContext): AnyRoute[] {
  const auth = { verify: ctx.authenticateUser, security: 'userJwt', responses: { 403: { description: 'The user is banned (USER_BANNED)' }, 429: { description: "Too many requests (RATE_LIMITED, with Retry-After): over this user's request budget" } } };
  const tags = ['attachments'];
  const common = {
    401: { description: 'JWT missing, invalid or expired' },
    404: { description: 'No such chat, or you are not a member (CHAT_NOT_FOUND)' },
    503: { description: 'No object store (ATTACHMENTS_STORE=off), or it is unreachable (UNAVAILABLE); retry later' },
  };
  /** The chat's summary is the membership check: CHAT_NOT_FOUND for a non-member. */
  const member = async (p: { appId: string; userId: string; expiresAt: number }, chatId: string) => {
    const chat = await ctx.chats.get(p, chatId);
    return isApiError(chat) ? chat : undefined;
  };
  return [
    defineRoute({
      method: 'POST',
      path: '/api/chats/:chatId/uploads',
      operationId: 'createUpload',
      summary: 'Ask for an upload of one file to a chat of mine: where to PUT its bytes',
      description:
        "The answer's `upload` is the request to make: PUT exactly `size` bytes to `upload.url` with `upload.headers` (signed: another size or type is refused), within 15 minutes. " +
        'With `multipart: true` the answer has `parts` instead: PUT each part (8 MiB, the last fewer) to its own URL, in any order; an interrupted upload resumes with GET …/uploads/{uploadId}, which names the parts received and signs new URLs for the others. ' +
        'Then finalize it. An upload not sent in a message within ATTACHMENT_UPLOAD_TTL_SECONDS (an hour) is deleted. ' +
        'The URLs write the upload\'s own key, never the finalized file: after finalize a PUT to them changes nothing served (the embedded store refuses it, 409 UPLOAD_FINALIZED).',
      tags,
      params: ChatParams,
      body: CreateUploadBody,
      auth,
      responses: {
        201: { description: 'The upload and where to put its bytes', schema: Upload },
        400: { description: 'Invalid fields (VALIDATION_FAILED)' },
        413: { description: "Larger than ATTACHMENT_MAX_BYTES (FILE_TOO_LARGE), or past what is left of the application's ATTACHMENT_APP_MAX_TOTAL_BYTES (STORAGE_QUOTA_EXCEEDED)" },
        415: { description: 'A refused type (FILE_TYPE_REFUSED)' },
        ...common,
      },
      handler: async ({ params, body, auth }) => {
        if (!ctx.attachments) return off();
        const refused = await member(auth, params.chatId);
        return refused ?? reply(201, await ctx.attachments.createUpload(auth, params.chatId, body));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/chats/:chatId/uploads/:uploadId',
      operationId: 'getUpload',
      summary: 'Where an upload of mine stands: finalized, or the bytes received and fresh URLs for the rest (the uploader only)',
      description: 'Resumes an interrupted upload: a multipart upload lists its parts, `received` or with a new signed `upload` request each; a single-PUT upload not received gets a new URL.',
      tags,
      params: UploadParams,
      auth,
      responses: {
        200: { description: 'The upload', schema: UploadState },
        400: { description: 'chatId or uploadId is not a UUID' },
        ...common,
        404: { description: 'Not a member (CHAT_NOT_FOUND), or no such upload of yours (UPLOAD_NOT_FOUND; also once expired)' },
      },
      handler: async ({ params, auth }) => {
        if (!ctx.attachments) return off();
        const refused = await member(auth, params.chatId);
        return refused ?? reply(200, await ctx.attachments.uploadState(auth, params.chatId, params.uploadId));
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/chats/:chatId/uploads/:uploadId/finalize',
      operationId: 'finalizeUpload',
      summary: 'Check an uploaded file and make it an attachment (the uploader only; idempotent)',
      description:
        'The node reads the stored bytes: their type (sniffed from the bytes, never the declared one) must be allowed; an image is stored again without its metadata (EXIF, GPS), with a WebP thumbnail and a ThumbHash placeholder. A refused file is deleted. ' +
        'The bytes checked are written to a key no upload URL can write, which downloads read: a later PUT to the upload URL never replaces them. Idempotent, also when retries race: every finalize of an upload answers the same attachment.',
      tags,
      params: UploadParams,
      bodyOptional: true,
      auth,
      responses: {
        200: { description: 'The attachment, as a message will carry it', schema: Attachment },
        400: { description: 'chatId or uploadId is not a UUID' },
        409: { description: 'No bytes yet, or parts of a multipart upload missing, each named (UPLOAD_INCOMPLETE)' },
        415: { description: 'The sniffed type is refused (FILE_TYPE_REFUSED); the file was deleted' },
        422: { description: 'The malware scanner (CLAMAV_ADDRESS) found something (FILE_INFECTED), or an image does not decode or has more than 50,000,000 pixels, so its metadata cannot be stripped (IMAGE_UNREADABLE); the file was deleted' },
        ...common,
        404: { description: 'Not a member (CHAT_NOT_FOUND), or no such upload of yours (UPLOAD_NOT_FOUND)' },
      },
      handler: async ({ params, auth }) => {
        if (!ctx.attachments) return off();
        const refused = await member(auth, params.chatId);
        return refused ?? reply(200, await ctx.attachments.finalize(auth, params.chatId, params.uploadId));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/chats/:chatId/attachments/:attachmentId',
      operationId: 'getAttachment',
      summary: 'Signed URLs of a file and its thumbnail, valid 5 minutes (members only)',
      description:
        'Only for a file of a message that is shown (not hidden pending review, not deleted), or an upload of yours not sent yet. ' +
        'On the embedded store each download through the URL is checked again: once the message is hidden or deleted, or the chat deleted, it answers 404 FILE_NOT_FOUND. ' +
        'An S3 presigned URL cannot be called back: it works until it expires (5 minutes), whatever happens meanwhile.',
      tags,
      params: AttachmentParams,
      auth,
      responses: {
        200: { description: 'The attachment and its URLs', schema: AttachmentAccess },
        400: { description: 'chatId or attachmentId is not a UUID' },
        ...common,
        404: { description: 'Not a member (CHAT_NOT_FOUND), or no such attachment (ATTACHMENT_NOT_FOUND)' },
      },
      handler: async ({ params, auth }) => {
        if (!ctx.attachments) return off();
        const refused = await member(auth, params.chatId);
        return refused ?? reply(200, await ctx.attachments.access(auth, params.chatId, params.attachmentId));
      },
    }),
  ];
}
