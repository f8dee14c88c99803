import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListPartsCommand,
  UploadPartCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  PutBucketCorsCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { BackendUnavailableError } from '../../common/index.ts';
import {
  checkExpiry,
  checkKey,
  checkPart,
  checkPrefix,
  type ObjectInfo,
  type ObjectStore,
  type PresignGetOptions,
  type PresignPartOptions,
  type PresignPutOptions,
  type SignedRequest,
  type StoredPart,
} from './object-store.ts';

export interface S3ObjectStoreOptions {
  /** The service's address, e.g. `http://127.0.0.1:7070` (path-style requests: bucket in the path). */
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /**
   * The address clients reach the service at, when it differs from `endpoint` (a node talking to
   * the service on a private network): signed URLs are made for it. Default: `endpoint`.
   */
  publicEndpoint?: string;
  /** Milliseconds a request may take before it fails (the node then answers 503). */
  requestTimeoutMs?: number;
  /**
   * Browser origins that PUT and GET the bucket's signed URLs (CORS_ORIGINS; `*`: any). A bucket
   * this store creates gets CORS rules allowing them; an existing bucket's rules are left as the
   * operator set them. None: the bucket is created without rules.
   */
  corsOrigins?: readonly string[];
}

/** After a failed check of the bucket, how long calls fail at once before it is tried again. */
const RECHECK_MS = 2_000;

/**
 * The object store on an S3-compatible service (AWS S3, MinIO, versitygw, Ceph RGW, …), through
 * the AWS SDK: a put is durable when the service acknowledges it; signed URLs are SigV4 presigned
 * requests, a PUT's signed over its Content-Length and Content-Type so the service refuses any
 * other size or type. Opening creates the bucket when it is missing, with CORS rules for `corsOrigins`.
 *
 * A service that cannot be reached, or answers 5xx, is BackendUnavailableError (the node answers
 * 503 and nothing else it does depends on it): at open too, where the bucket is then checked again
 * at the first call after RECHECK_MS. A refusal at open (wrong credentials, a bucket of someone
 * else) is an error of the configuration, and fails the open.
 */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3';
  private bucketChecked = false;
  private lastCheckFailedAt = 0;

  private constructor(
    private readonly client: S3Client,
    private readonly signer: S3Client,
    private readonly bucket: string,
    private readonly corsOrigins: readonly string[],
  ) {}

  static async open(o: S3ObjectStoreOptions): Promise<S3ObjectStore> {
    const client = (endpoint: string) =>
      new S3Client({
        endpoint,
        region: o.region,
        forcePathStyle: true,
        credentials: { accessKeyId: o.accessKeyId, secretAccessKey: o.secretAccessKey },
        // Checksums only where S3 requires them: a presigned PUT then carries no checksum a browser
        // would have to compute, and every S3-compatible service accepts the requests.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        maxAttempts: 2,
        requestHandler: { requestTimeout: o.requestTimeoutMs ?? 10_000, connectionTimeout: 3_000 },
      });
    const store = new S3ObjectStore(client(o.endpoint), client(o.publicEndpoint ?? o.endpoint), o.bucket, o.corsOrigins ?? []);
    await store.ready().catch((error: unknown) => {
      if (!(error instanceof BackendUnavailableError)) throw error;
    });
    return store;
  }

  async put(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
    checkKey(key);
    await this.send(() => this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType: contentType, ContentLength: bytes.length })));
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    checkKey(key);
    try {
      const r = await this.send(() => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key })));
      return { key, size: r.ContentLength ?? 0, modifiedAt: r.LastModified ?? new Date(0) };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Uint8Array | undefined> {
    checkKey(key);
    if (range && range.end <= range.start) return (await this.head(key)) ? new Uint8Array(0) : undefined;
    try {
      const r = await this.send(() => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end - 1}` } : {}) })));
      return r.Body ? await r.Body.transformToByteArray().catch(unavailable) : new Uint8Array(0);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      // A range that starts past the end of a non-empty object: no bytes, as on the local store.
      if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 416) return new Uint8Array(0);
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    await this.send(() => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key })));
  }

  async deletePrefix(prefix: string): Promise<number> {
    checkPrefix(prefix);
    let count = 0;
    let batch: string[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const r = await this.send(() => this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } })));
      const failed = r.Errors?.filter((e) => e.Code !== 'NoSuchKey') ?? [];
      if (failed.length > 0) throw new Error(`deleting under ${prefix}: ${failed.length} objects failed, first ${failed[0]!.Key}: ${failed[0]!.Code} ${failed[0]!.Message}`);
      count += batch.length;
      batch = [];
    };
    for await (const o of this.list(prefix)) {
      batch.push(o.key);
      if (batch.length === 1000) await flush();
    }
    await flush();
    // Unfinished multipart uploads are no objects: their parts would stay (and be paid for) unless ended.
    let keyMarker: string | undefined;
    let idMarker: string | undefined;
    do {
      const r = await this.send(() => this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: prefix, KeyMarker: keyMarker, UploadIdMarker: idMarker })));
      for (const u of r.Uploads ?? []) if (u.Key !== undefined && u.UploadId !== undefined) await this.abortMultipart(u.Key, u.UploadId);
      [keyMarker, idMarker] = r.IsTruncated ? [r.NextKeyMarker, r.NextUploadIdMarker] : [undefined, undefined];
    } while (keyMarker !== undefined);
    return count;
  }

  async createMultipart(key: string, contentType: string): Promise<string> {
    checkKey(key);
    const r = await this.send(() => this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key, ContentType: contentType })));
    if (!r.UploadId) throw new BackendUnavailableError('object store', { cause: new Error('CreateMultipartUpload answered no UploadId') });
    return r.UploadId;
  }

  async presignPart(key: string, multipartId: string, partNumber: number, o: PresignPartOptions): Promise<SignedRequest> {
    checkKey(key);
    checkPart(multipartId, partNumber);
    checkExpiry(o.expiresInSeconds);
    const command = new UploadPartCommand({ Bucket: this.bucket, Key: key, UploadId: multipartId, PartNumber: partNumber, ContentLength: o.size });
    const url = await getSignedUrl(this.signer, command, { expiresIn: o.expiresInSeconds, signableHeaders: new Set(['content-length']) });
    return { method: 'PUT', url, headers: { 'content-length': String(o.size) }, expiresAt: new Date(Date.now() + o.expiresInSeconds * 1000) };
  }

  async listParts(key: string, multipartId: string): Promise<StoredPart[] | undefined> {
    return (await this.partsWithTags(key, multipartId))?.map(({ number, size }) => ({ number, size }));
  }

  async completeMultipart(key: string, multipartId: string, partNumbers: readonly number[]): Promise<void> {
    const stored = await this.partsWithTags(key, multipartId);
    if (!stored) throw new Error(`no unfinished multipart upload ${multipartId} of ${key}`);
    const tags = new Map(stored.map((p) => [p.number, p.etag]));
    const missing = partNumbers.filter((n) => !tags.has(n));
    if (missing.length > 0) throw new Error(`parts ${missing.join(', ')} of ${key} are not stored`);
    const Parts = partNumbers.map((n) => ({ PartNumber: n, ETag: tags.get(n)! }));
    await this.send(() => this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: multipartId, MultipartUpload: { Parts } })));
  }

  async abortMultipart(key: string, multipartId: string): Promise<void> {
    checkKey(key);
    checkPart(multipartId);
    try {
      await this.send(() => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: multipartId })));
    } catch (error) {
      if (!isNoSuchUpload(error)) throw error;
    }
  }

  /** The stored parts with their ETags (which completing names), or undefined for no such unfinished upload. */
  private async partsWithTags(key: string, multipartId: string): Promise<(StoredPart & { etag: string })[] | undefined> {
    checkKey(key);
    checkPart(multipartId);
    const parts: (StoredPart & { etag: string })[] = [];
    let marker: string | undefined;
    try {
      do {
        const r = await this.send(() => this.client.send(new ListPartsCommand({ Bucket: this.bucket, Key: key, UploadId: multipartId, PartNumberMarker: marker })));
        for (const p of r.Parts ?? []) if (p.PartNumber !== undefined && p.ETag !== undefined) parts.push({ number: p.PartNumber, size: p.Size ?? 0, etag: p.ETag });
        marker = r.IsTruncated ? r.NextPartNumberMarker : undefined;
      } while (marker !== undefined);
    } catch (error) {
      if (isNoSuchUpload(error)) return undefined;
      throw error;
    }
    return parts.sort((a, b) => a.number - b.number);
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix);
    let token: string | undefined;
    do {
      const r = await this.send(() => this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token })));
      for (const o of r.Contents ?? []) if (o.Key !== undefined) yield { key: o.Key, size: o.Size ?? 0, modifiedAt: o.LastModified ?? new Date(0) };
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
  }

  async presignPut(key: string, o: PresignPutOptions): Promise<SignedRequest> {
    checkKey(key);
    checkExpiry(o.expiresInSeconds);
    const command = new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: o.contentType, ContentLength: o.size });
    const url = await getSignedUrl(this.signer, command, { expiresIn: o.expiresInSeconds, signableHeaders: new Set(['content-type', 'content-length']) });
    return { method: 'PUT', url, headers: { 'content-type': o.contentType, 'content-length': String(o.size) }, expiresAt: new Date(Date.now() + o.expiresInSeconds * 1000) };
  }

  async presignGet(key: string, o: PresignGetOptions): Promise<string> {
    checkKey(key);
    checkExpiry(o.expiresInSeconds);
    const disposition = o.downloadName === undefined ? 'inline' : `attachment; filename*=UTF-8''${encodeURIComponent(o.downloadName)}`;
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: key, ResponseContentType: o.contentType, ResponseContentDisposition: disposition });
    return getSignedUrl(this.signer, command, { expiresIn: o.expiresInSeconds });
  }

  async close(): Promise<void> {
    this.client.destroy();
    this.signer.destroy();
  }

  /**
   * One request, after the bucket is known to exist. Not found (404) and a range past the end
   * (416) are left to the caller; an unreachable service or a 5xx becomes BackendUnavailableError.
   */
  private async send<T>(call: () => Promise<T>): Promise<T> {
    await this.ready();
    return call().catch(unavailable);
  }

  /** Checks the bucket, creating it when missing, until that has succeeded once. */
  private async ready(): Promise<void> {
    if (this.bucketChecked) return;
    if (Date.now() - this.lastCheckFailedAt < RECHECK_MS) throw new BackendUnavailableError('object store');
    try {
      try {
        await this.client.send(new HeadBucketCommand({ Bucket: this.bucket })).catch(unavailable);
      } catch (error) {
        if (!isNotFound(error)) throw error;
        const created = await this.client.send(new CreateBucketCommand({ Bucket: this.bucket })).then(
          () => true,
          (e: unknown) => {
            // Another node created it meanwhile (and sets its rules).
            if (!(e instanceof S3ServiceException && (e.name === 'BucketAlreadyOwnedByYou' || e.name === 'BucketAlreadyExists'))) return unavailable(e);
            return false;
          },
        );
        if (created && this.corsOrigins.length > 0) await this.client.send(new PutBucketCorsCommand(corsRules(this.bucket, this.corsOrigins))).catch(unavailable);
      }
      this.bucketChecked = true;
    } catch (error) {
      if (error instanceof BackendUnavailableError) this.lastCheckFailedAt = Date.now();
      throw error;
    }
  }
}

/**
 * What browsers of `origins` need: the preflight of a signed PUT (its Content-Type and
 * Content-Length are signed headers), and GETs of signed downloads read by scripts.
 */
function corsRules(bucket: string, origins: readonly string[]) {
  return {
    Bucket: bucket,
    CORSConfiguration: {
      CORSRules: [{ AllowedOrigins: [...origins], AllowedMethods: ['PUT', 'GET', 'HEAD'], AllowedHeaders: ['content-type', 'content-length'], ExposeHeaders: ['ETag'], MaxAgeSeconds: 3600 }],
    },
  };
}

/** Rethrows a refusal the caller reads (4xx) as it is, anything else as the service being unavailable. */
function unavailable(error: unknown): never {
  const status = error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined;
  if (status !== undefined && status >= 400 && status < 500) throw error;
  throw new BackendUnavailableError('object store', { cause: error });
}

function isNoSuchUpload(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === 'NoSuchUpload' || error.$metadata.httpStatusCode === 404);
}

function isNotFound(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.$metadata.httpStatusCode === 404 || error.name === 'NotFound' || error.name === 'NoSuchKey' || error.name === 'NoSuchBucket');
}
