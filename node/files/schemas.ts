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

export const Upload = Type.Object({
  uploadId: Uuid,
  upload: SignedPut,
  expiresAt: Type.String({ format: 'date-time', description: 'An upload not finalized by then is deleted' }),
});
export type Upload = Static<typeof Upload>;

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
