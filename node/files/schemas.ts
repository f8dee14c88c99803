import Type, { type Static } from 'typebox';
import { DisplayText } from '../../common/index.ts';
import { AttachmentSchema } from '../chat/index.ts';

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });

/** A MIME type as `type/subtype`, without parameters: what an upload declares and what a file is sniffed as. */
export const MimeType = Type.String({ minLength: 3, maxLength: 127, pattern: '^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$', description: 'A MIME type, lower case, without parameters' });
export const FileName = DisplayText(1, 255, { description: "The file's name as the user sees it (1-255 characters, no control characters)" });

export const CreateUploadBody = Type.Object(
  {
    name: FileName,
    size: Type.Integer({ minimum: 1, description: 'The exact byte length that will be put' }),
    type: Type.Optional(MimeType),
    multipart: Type.Optional(
      Type.Boolean({ description: 'Put the bytes in parts of UPLOAD_PART_BYTES (8 MiB), each its own PUT, so an interrupted upload resumes where it stopped (see GET …/uploads/{uploadId})' }),
    ),
  },
  { additionalProperties: false },
);
export type CreateUploadBody = Static<typeof CreateUploadBody>;

export const UploadParams = Type.Object({ chatId: Uuid, uploadId: Uuid });
export const AttachmentParams = Type.Object({ chatId: Uuid, attachmentId: Uuid });

export const SignedPut = Type.Object({
  method: Type.Literal('PUT'),
  url: Type.String({ description: 'Where to PUT the bytes: this node (embedded store) or the S3 service' }),
  headers: Type.Record(Type.String(), Type.String(), { description: 'Headers the PUT must carry exactly (Content-Type and Content-Length are signed)' }),
  expiresAt: Timestamp,
});

export const UploadPart = Type.Object({
  number: Type.Integer({ minimum: 1, description: 'Its number, from 1' }),
  offset: Type.Integer({ minimum: 0, description: 'Where its bytes start in the file' }),
  size: Type.Integer({ minimum: 1, description: 'How many bytes it has: UPLOAD_PART_BYTES, the last one fewer' }),
  received: Type.Boolean({ description: 'Whether the store has it' }),
  upload: Type.Optional(SignedPut),
});
export type UploadPart = Static<typeof UploadPart>;

export const Upload = Type.Object({
  uploadId: Uuid,
  upload: Type.Optional(SignedPut),
  parts: Type.Optional(Type.Array(UploadPart, { description: 'A multipart upload’s parts, each with where to PUT it' })),
  expiresAt: Type.String({ format: 'date-time', description: 'An upload not sent in a message by then is deleted' }),
});
export type Upload = Static<typeof Upload>;

export const UploadState = Type.Object({
  uploadId: Uuid,
  name: FileName,
  size: Type.Integer({ minimum: 1 }),
  expiresAt: Timestamp,
  finalized: Type.Boolean(),
  attachment: Type.Optional(AttachmentSchema),
  received: Type.Integer({ minimum: 0, description: 'Bytes the store has (the whole file, or the parts received)' }),
  upload: Type.Optional(SignedPut),
  parts: Type.Optional(Type.Array(UploadPart, { description: 'A multipart upload’s parts, fresh URLs for those not received' })),
});
export type UploadState = Static<typeof UploadState>;

/** What a message carries of each file: the chat's schema (metadata only, never bytes or a URL). */
export const Attachment = AttachmentSchema;
export type Attachment = Static<typeof Attachment>;

export const AttachmentAccess = Type.Object({
  attachment: Attachment,
  url: Type.String({ description: 'A signed URL of the file, valid until expiresAt' }),
  thumbnailUrl: Type.Optional(Type.String({ description: "A signed URL of an image's thumbnail (WebP)" })),
  expiresAt: Timestamp,
});
export type AttachmentAccess = Static<typeof AttachmentAccess>;
