/**
 * Attachment storage: the ObjectStore contract and its two implementations, files under the data
 * directory (embedded) and an S3-compatible service (clusters).
 */
export {
  checkKey,
  InvalidObjectKeyError,
  MAX_OBJECT_KEY_LENGTH,
  MAX_SIGNED_URL_SECONDS,
  objectKeyProblem,
  type ObjectInfo,
  type ObjectStore,
  type PresignGetOptions,
  type PresignPutOptions,
  type SignedRequest,
} from './object-store.ts';
export { LOCAL_FILES_PATH, LocalObjectStore, type LocalObjectStoreOptions, type LocalSignedRequest, type LocalSignedResponse } from './local-store.ts';
export { S3ObjectStore, type S3ObjectStoreOptions } from './s3-store.ts';
export { serveLocalFiles } from './local-route.ts';
export { attachmentsOf, attachmentsStoreKind, openObjectStore } from './open.ts';
export { UPLOAD_URL_SECONDS } from './upload-transfer.ts';
export { UPLOAD_PART_BYTES } from './upload-record.ts';
export { Attachments, DOWNLOAD_URL_SECONDS, type AttachmentLimits, type AttachmentsOptions, type Uploader } from './attachments.ts';
export { FileSweeper, type SweepChecks } from './sweeper.ts';
export { FileRules, ruleOf, type AttachmentSettingsSource, type FileRule } from './file-rules.ts';
export { inspectFile, THUMBNAIL_MAX_SIDE, type InspectedFile, type UnreadableImage } from './inspect.ts';
export { Attachment, AttachmentAccess, AttachmentParams, CreateUploadBody, Upload, UploadParams, UploadState } from './schemas.ts';
export { ClamdScanner, type FileScanner, type ScanVerdict } from './malware-scan.ts';
export { FileDeletions, FILES_EVENT } from './file-deletions.ts';
