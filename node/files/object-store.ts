/**
 * Where attachment bytes live: an object store of immutable blobs under keys. Two implementations
 * stand behind this one contract: files under the node's data directory (LocalObjectStore, the
 * embedded default) and an S3-compatible service (S3ObjectStore, for clusters). Both pass the
 * conformance suite in test/node/object-store-conformance.ts.
 *
 * What every implementation promises:
 * - `put` is all or nothing: once it resolves, `head` and `read` see the whole object, and before
 *   that they see the object's previous version or none, never part of one. A put that resolves is
 *   durable (synced to disk, or acknowledged by the S3 service).
 * - Writing a key again replaces its object whole (uploads never do: each has a fresh key).
 * - `delete` and `deletePrefix` are idempotent: deleting what is absent succeeds. `deletePrefix`
 *   also ends every unfinished multipart upload of a key under the prefix, deleting its parts.
 * - A multipart upload shows nothing under its key until `completeMultipart`, which makes the
 *   object whole from its parts in one step (as a put); parts put again replace the earlier ones.
 * - `list` yields every object under a prefix that existed when the listing started and still
 *   exists, each once, in no promised order; objects written meanwhile may or may not appear.
 * - Signed URLs are capabilities: whoever holds one may do exactly what it names (PUT exactly
 *   `size` bytes of `contentType`, or GET one object) until it expires, and nothing else.
 * - Keys are checked (objectKeyProblem) before any I/O; a bad key throws, it never reaches a path
 *   or a request.
 */

/** An object as the store lists it. */
export interface ObjectInfo {
  key: string;
  size: number;
  /** When its bytes were last written. */
  modifiedAt: Date;
}

/** A request a client makes itself, straight to where the bytes go. */
export interface SignedRequest {
  method: 'PUT';
  url: string;
  /** Headers the request must carry exactly as given (they are part of the signature). */
  headers: Record<string, string>;
  expiresAt: Date;
}

export interface PresignPutOptions {
  /** The exact byte length the client must send. */
  size: number;
  contentType: string;
  expiresInSeconds: number;
}

export interface PresignPartOptions {
  /** The exact byte length of the part. */
  size: number;
  expiresInSeconds: number;
}

/** A part of an unfinished multipart upload as the store has it. */
export interface StoredPart {
  /** 1-based. */
  number: number;
  size: number;
}

export interface PresignGetOptions {
  expiresInSeconds: number;
  /** The Content-Type the download is served with. */
  contentType: string;
  /** Offered to the browser as the file's name (Content-Disposition: attachment). Inline when absent. */
  downloadName?: string;
}

export interface ObjectStore {
  /** `local` (files under the data directory) or `s3`. */
  readonly kind: 'local' | 's3';
  /** Stores `bytes` under `key`, replacing any object there; resolves once durable. */
  put(key: string, bytes: Uint8Array, contentType: string): Promise<void>;
  /** The object's size and time, or undefined when there is none. */
  head(key: string): Promise<ObjectInfo | undefined>;
  /**
   * The object's bytes, or only `range` of them (`start` inclusive, `end` exclusive, clamped to
   * the object's end), or undefined when there is none.
   */
  read(key: string, range?: { start: number; end: number }): Promise<Uint8Array | undefined>;
  delete(key: string): Promise<void>;
  /** Deletes every object whose key starts with `prefix` (which must end with '/'); resolves with how many. */
  deletePrefix(prefix: string): Promise<number>;
  /** The objects whose keys start with `prefix` (which must end with '/'). */
  list(prefix: string): AsyncIterable<ObjectInfo>;
  /** A request a client can make to upload one object of exactly `size` bytes under `key`. */
  presignPut(key: string, options: PresignPutOptions): Promise<SignedRequest>;
  /** Starts an upload of one object under `key` in parts; its id. */
  createMultipart(key: string, contentType: string): Promise<string>;
  /** A request a client can make to put part `partNumber` (1-10,000) of exactly `size` bytes. */
  presignPart(key: string, multipartId: string, partNumber: number, options: PresignPartOptions): Promise<SignedRequest>;
  /** The parts stored so far, by number ascending; undefined when no such upload is unfinished. */
  listParts(key: string, multipartId: string): Promise<StoredPart[] | undefined>;
  /** Joins the stored parts `partNumbers` (ascending) into the object under `key` and ends the upload. */
  completeMultipart(key: string, multipartId: string, partNumbers: readonly number[]): Promise<void>;
  /** Ends an unfinished upload and deletes its parts; idempotent. */
  abortMultipart(key: string, multipartId: string): Promise<void>;
  /** A URL that serves the object under `key` to whoever has it, until it expires. */
  presignGet(key: string, options: PresignGetOptions): Promise<string>;
  close(): Promise<void>;
}

/** Longest key: S3 allows 1,024 bytes; ours stay well under it (tenant, chat and upload ids). */
export const MAX_OBJECT_KEY_LENGTH = 512;
/** Longest signed-URL lifetime (S3's SigV4 limit is 7 days; attachments need minutes). */
export const MAX_SIGNED_URL_SECONDS = 24 * 3600;
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Why `key` may not name an object, or undefined when it may: '/'-separated segments of letters,
 * digits, '.', '_' and '-', none empty and none starting with '.' (so no '..' and no hidden
 * files), at most MAX_OBJECT_KEY_LENGTH characters. The same rule on every store, so a key that
 * works on one works on the other, and a key is always a safe relative path. Linear in the key.
 */
export function objectKeyProblem(key: string): string | undefined {
  if (key.length === 0 || key.length > MAX_OBJECT_KEY_LENGTH) return `must be 1-${MAX_OBJECT_KEY_LENGTH} characters`;
  for (const segment of key.split('/')) if (!SEGMENT.test(segment)) return "must be '/'-separated segments of letters, digits, '.', '_' and '-', none empty or starting with '.'";
  return undefined;
}

/** A prefix is a key followed by '/'. */
export function objectPrefixProblem(prefix: string): string | undefined {
  if (!prefix.endsWith('/')) return "must end with '/'";
  return objectKeyProblem(prefix.slice(0, -1));
}

export class InvalidObjectKeyError extends Error {
  readonly code = 'INVALID_OBJECT_KEY';
  constructor(
    readonly key: string,
    readonly problem: string,
  ) {
    super(`object key ${JSON.stringify(key.slice(0, 80))} ${problem}`);
  }
}

export function checkKey(key: string): void {
  const problem = objectKeyProblem(key);
  if (problem) throw new InvalidObjectKeyError(key, problem);
}

export function checkPrefix(prefix: string): void {
  const problem = objectPrefixProblem(prefix);
  if (problem) throw new InvalidObjectKeyError(prefix, problem);
}

/** Parts are numbered 1-10,000 (S3's range). */
export const MAX_PART_NUMBER = 10_000;
/** A multipart upload's id: letters, digits and a few signs (S3's ids are opaque; ours are UUIDs). */
const MULTIPART_ID = /^[A-Za-z0-9._~+=-]{1,1024}$/;

export function checkPart(multipartId: string, partNumber?: number): void {
  if (!MULTIPART_ID.test(multipartId)) throw new RangeError('not a multipart upload id');
  if (partNumber !== undefined && (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PART_NUMBER)) throw new RangeError(`a part number is 1-${MAX_PART_NUMBER}, not ${partNumber}`);
}

export function checkExpiry(seconds: number): void {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_SIGNED_URL_SECONDS) throw new RangeError(`a signed URL lives 1-${MAX_SIGNED_URL_SECONDS} s, not ${seconds}`);
}
