import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createReadStream, type ReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ApiError, type ErrorCode, type Problem } from '../../common/errors/index.ts';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../../common/files/index.ts';
import { LocalParts } from './local-parts.ts';
import {
  checkExpiry,
  checkKey,
  checkPart,
  checkPrefix,
  MAX_PART_NUMBER,
  objectKeyProblem,
  type ObjectInfo,
  type ObjectStore,
  type PresignGetOptions,
  type PresignPartOptions,
  type PresignPutOptions,
  type SignedRequest,
  type StoredPart,
} from './object-store.ts';

/** Where the node serves the local store's signed URLs: `${publicUrl}${LOCAL_FILES_PATH}<key>?…`. */
export const LOCAL_FILES_PATH = '/v1/files/';

export interface LocalObjectStoreOptions {
  /** The directory that holds the objects (created 0700 if missing). */
  dir: string;
  /** The node's address as clients reach it: signed URLs start with it (read at each signing). */
  publicUrl: string | (() => string);
}

/** A signed request to the local store, as its transport received it. */
export interface LocalSignedRequest {
  method: string;
  /** The object's key: the request path after LOCAL_FILES_PATH, percent-decoded. */
  key: string;
  query: URLSearchParams;
  /** The request's Content-Length header (PUT), as sent. */
  contentLength?: string;
  /** The request's Content-Type header (PUT), as sent. */
  contentType?: string;
  /** The request's body (PUT), read only once the signature holds. */
  body?: AsyncIterable<Uint8Array>;
}

/** What the transport answers: a status with headers, and bytes or a file stream for a GET. */
export interface LocalSignedResponse {
  status: number;
  headers: Record<string, string>;
  /** A refusal, rendered as application/problem+json by the transport. */
  problem?: Problem;
  file?: ReadStream;
}

/**
 * What a signature alone cannot know: whether what it allowed when it was signed is still allowed
 * (the attachments' rules: signed-checks.ts). Asked once a request's signature holds, before any
 * byte is read or served: undefined to go on, else the refusal to answer.
 */
export type SignedRequestCheck = (method: 'GET' | 'PUT', key: string) => Promise<ApiError | undefined>;

/** The signing key's file in the store's directory: not an object (keys never start with '.'). */
const SIGNING_KEY_FILE = '.signing-key';
const TMP_DIR = '.tmp';
/** What a signed URL signs, in order: method, expiry, size, type, download name; a part's upload id and number. */
const SIGNED = ['m', 'e', 's', 't', 'd', 'u', 'p'] as const;

/**
 * The embedded object store: each object a file under `dir` at its key's path, written to a
 * temporary file, synced, renamed into place and its directory synced (so a put that resolved
 * survives power loss, and a crash mid-put leaves the old object or none). Signed URLs point at the
 * node itself (LOCAL_FILES_PATH) and carry an HMAC over what they allow, with a key kept in the
 * directory (0600), so every process on the same directory signs alike and restarts keep URLs
 * valid. `handleSigned` serves them for whichever HTTP transport the node runs.
 */
export class LocalObjectStore implements ObjectStore {
  readonly kind = 'local';
  private readonly parts = new LocalParts((key) => this.path(key));
  private check: SignedRequestCheck | undefined;

  private constructor(
    private readonly dir: string,
    private readonly publicUrl: () => string,
    private readonly signingKey: Buffer,
  ) {}

  static async open(options: LocalObjectStoreOptions): Promise<LocalObjectStore> {
    ensurePrivateDir(options.dir);
    await mkdir(join(options.dir, TMP_DIR), { recursive: true, mode: 0o700 });
    const keyFile = join(options.dir, SIGNING_KEY_FILE);
    // The first process to get here creates the key; one racing it reads the winner's ('wx' fails).
    await writeFile(keyFile, randomBytes(32), { flag: 'wx', mode: PRIVATE_FILE_MODE }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    const signingKey = await readFile(keyFile);
    if (signingKey.length !== 32) throw new Error(`${keyFile} holds ${signingKey.length} bytes, not a 32-byte signing key: remove it to make a new one (URLs signed with it stop working)`);
    const url = options.publicUrl;
    return new LocalObjectStore(options.dir, typeof url === 'string' ? () => url : url, signingKey);
  }

  /** The type is not kept: a download is served with the type its URL was signed for. */
  async put(key: string, bytes: Uint8Array, _contentType?: string): Promise<void> {
    checkKey(key);
    const tmp = this.tmpPath();
    const file = await open(tmp, 'w', PRIVATE_FILE_MODE);
    try {
      await file.writeFile(bytes);
      await file.sync();
    } finally {
      await file.close();
    }
    await this.commit(tmp, key);
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    checkKey(key);
    const s = await stat(this.path(key)).catch(absent);
    return s?.isFile() ? { key, size: s.size, modifiedAt: s.mtime } : undefined;
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Uint8Array | undefined> {
    checkKey(key);
    if (!range) return (await readFile(this.path(key)).catch(absent)) ?? undefined;
    const file = await open(this.path(key), 'r').catch(absent);
    if (!file) return undefined;
    try {
      const size = (await file.stat()).size;
      const end = Math.min(range.end, size);
      const length = Math.max(0, end - range.start);
      const out = Buffer.alloc(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await file.read(out, done, length - done, range.start + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return out.subarray(0, done);
    } finally {
      await file.close();
    }
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    await rm(this.path(key), { force: true });
  }

  async deletePrefix(prefix: string): Promise<number> {
    checkPrefix(prefix);
    let count = 0;
    for await (const o of this.list(prefix)) {
      await rm(this.path(o.key), { force: true });
      count++;
    }
    await rm(this.path(prefix.slice(0, -1)), { recursive: true, force: true });
    return count;
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix);
    yield* this.walk(prefix.slice(0, -1));
  }

  async presignPut(key: string, o: PresignPutOptions): Promise<SignedRequest> {
    checkKey(key);
    checkExpiry(o.expiresInSeconds);
    const expires = Math.floor(Date.now() / 1000) + o.expiresInSeconds;
    const params = { m: 'PUT', e: String(expires), s: String(o.size), t: o.contentType };
    return {
      method: 'PUT',
      url: this.url(key, params),
      headers: { 'content-type': o.contentType, 'content-length': String(o.size) },
      expiresAt: new Date(expires * 1000),
    };
  }

  /** The type is not kept (as for `put`). */
  async createMultipart(key: string, _contentType?: string): Promise<string> {
    checkKey(key);
    return this.parts.create(key);
  }

  async presignPart(key: string, multipartId: string, partNumber: number, o: PresignPartOptions): Promise<SignedRequest> {
    checkKey(key);
    checkPart(multipartId, partNumber);
    checkExpiry(o.expiresInSeconds);
    const expires = Math.floor(Date.now() / 1000) + o.expiresInSeconds;
    const url = this.url(key, { m: 'PUT', e: String(expires), s: String(o.size), u: multipartId, p: String(partNumber) });
    return { method: 'PUT', url, headers: { 'content-length': String(o.size) }, expiresAt: new Date(expires * 1000) };
  }

  async listParts(key: string, multipartId: string): Promise<StoredPart[] | undefined> {
    checkKey(key);
    checkPart(multipartId);
    return this.parts.list(key, multipartId);
  }

  async completeMultipart(key: string, multipartId: string, partNumbers: readonly number[]): Promise<void> {
    checkKey(key);
    checkPart(multipartId);
    if (!(await this.parts.list(key, multipartId))) throw new Error(`no unfinished multipart upload ${multipartId} of ${key}`);
    const tmp = this.tmpPath();
    try {
      await this.parts.join(key, multipartId, partNumbers, tmp);
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
    await this.commit(tmp, key);
    await this.parts.remove(key, multipartId);
  }

  async abortMultipart(key: string, multipartId: string): Promise<void> {
    checkKey(key);
    checkPart(multipartId);
    await this.parts.remove(key, multipartId);
  }

  async presignGet(key: string, o: PresignGetOptions): Promise<string> {
    checkKey(key);
    checkExpiry(o.expiresInSeconds);
    const expires = Math.floor(Date.now() / 1000) + o.expiresInSeconds;
    return this.url(key, { m: 'GET', e: String(expires), t: o.contentType, ...(o.downloadName === undefined ? {} : { d: o.downloadName }) });
  }

  /**
   * Has `handleSigned` ask `check` about every request whose signature holds (one check: a later
   * one replaces it). Set by the attachments once they exist, which need this store first; until
   * then, and without one, a valid signature is all a request needs.
   */
  checkSignedRequests(check: SignedRequestCheck): void {
    this.check = check;
  }

  /**
   * Serves one request to a signed URL: checks the signature, the expiry and the method, then the
   * `check` given (checkSignedRequests), then stores a PUT's body (refused unless its Content-Length and Content-Type are the signed ones,
   * and cut off past the signed size) or opens the object for a GET. Answers 403 for a bad or
   * expired signature without touching the disk.
   */
  async handleSigned(r: LocalSignedRequest): Promise<LocalSignedResponse> {
    const grant = this.verify(r.method, r.key, r.query);
    if ('code' in grant) return refuse(grant.code, grant.detail);
    const refused = await this.check?.(r.method === 'PUT' ? 'PUT' : 'GET', r.key);
    if (refused) return refusal(refused);
    if (r.method === 'PUT') {
      if (r.contentLength !== String(grant.size)) return refuse('VALIDATION_FAILED', `Content-Length must be ${grant.size}, the size this URL was signed for`, '/headers/content-length');
      // A part has no type of its own (its upload's was given when it was made): any is taken.
      if (!grant.part && r.contentType !== grant.type) return refuse('VALIDATION_FAILED', `Content-Type must be ${grant.type}, the type this URL was signed for`, '/headers/content-type');
      const target = grant.part ? await this.parts.partPath(r.key, grant.part.id, grant.part.number) : this.path(r.key);
      if (!target) return refuse('UPLOAD_NOT_FOUND', 'this upload is finalized, ended or deleted: its parts are no longer taken');
      const tmp = this.tmpPath();
      const file = await open(tmp, 'w', PRIVATE_FILE_MODE);
      let received = 0;
      try {
        for await (const chunk of r.body ?? []) {
          received += chunk.length;
          if (received > grant.size) break;
          await file.write(chunk);
        }
        if (received === grant.size) await file.sync();
      } catch (error) {
        // The client went away mid-body: nothing of it stays.
        await file.close();
        await rm(tmp, { force: true });
        throw error;
      } finally {
        await file.close().catch(() => undefined);
      }
      if (received !== grant.size) {
        await rm(tmp, { force: true });
        return refuse('VALIDATION_FAILED', `the body must be exactly ${grant.size} bytes, the size this URL was signed for`, '/body');
      }
      // A part goes only into its upload's directory as it still is: one completed or ended
      // meanwhile is not made again for it (the rename fails, nothing stays).
      const committed = await this.commitTo(tmp, target, { create: !grant.part }).then(
        () => true,
        async (error: NodeJS.ErrnoException) => {
          await rm(tmp, { force: true });
          if (grant.part && error.code === 'ENOENT') return false;
          throw error;
        },
      );
      if (!committed) return refuse('UPLOAD_NOT_FOUND', 'this upload is finalized, ended or deleted: its parts are no longer taken');
      return { status: 200, headers: {} };
    }
    const s = await stat(this.path(r.key)).catch(absent);
    if (!s?.isFile()) return refuse('FILE_NOT_FOUND', 'the file is gone (its message or chat was deleted)');
    const disposition = grant.name === undefined ? 'inline' : `attachment; filename*=UTF-8''${encodeURIComponent(grant.name)}`;
    return {
      status: 200,
      headers: { 'content-type': grant.type, 'content-length': String(s.size), 'content-disposition': disposition, 'x-content-type-options': 'nosniff', 'cache-control': 'private, max-age=300' },
      file: createReadStream(this.path(r.key)),
    };
  }

  async close(): Promise<void> {}

  private verify(method: string, key: string, q: URLSearchParams): { size: number; type: string; name?: string; part?: { id: string; number: number } } | { code: ErrorCode; detail: string } {
    const sig = q.get('sig');
    const params: Record<string, string> = {};
    for (const name of SIGNED) {
      const v = q.get(name);
      if (v !== null) params[name] = v;
    }
    if (objectKeyProblem(key) || !sig || params.m !== method) return { code: 'SIGNED_URL_INVALID', detail: 'not a valid signed URL for this request' };
    const want = this.sign(key, params);
    const got = Buffer.from(sig, 'base64url');
    if (got.length !== want.length || !timingSafeEqual(got, want)) return { code: 'SIGNED_URL_INVALID', detail: 'not a valid signed URL for this request' };
    if (Number(params.e) * 1000 < Date.now()) return { code: 'SIGNED_URL_EXPIRED', detail: 'this signed URL has expired: ask for a new one' };
    const part = params.u === undefined ? undefined : { id: params.u, number: Number(params.p) };
    // Signed by this store, so well formed; checked again all the same before it names a path.
    if (part && (!/^[0-9a-f-]{36}$/.test(part.id) || !Number.isInteger(part.number) || part.number < 1 || part.number > MAX_PART_NUMBER)) return { code: 'SIGNED_URL_INVALID', detail: 'not a valid signed URL for this request' };
    return { size: Number(params.s ?? 0), type: params.t ?? 'application/octet-stream', ...(params.d === undefined ? {} : { name: params.d }), ...(part ? { part } : {}) };
  }

  private url(key: string, params: Record<string, string>): string {
    const q = new URLSearchParams({ ...params, sig: this.sign(key, params).toString('base64url') });
    return `${this.publicUrl().replace(/\/+$/, '')}${LOCAL_FILES_PATH}${key.split('/').map(encodeURIComponent).join('/')}?${q}`;
  }

  /**
   * HMAC over the key and every signed parameter, each named, so none can move to another. A
   * part's parameters are signed only when present, so URLs signed before they existed still hold.
   */
  private sign(key: string, params: Record<string, string>): Buffer {
    const names = params.u === undefined && params.p === undefined ? SIGNED.slice(0, 5) : SIGNED;
    const text = [key, ...names.map((n) => `${n}=${params[n] ?? ''}`)].join('\n');
    return createHmac('sha256', this.signingKey).update(text).digest();
  }

  private path(key: string): string {
    return join(this.dir, ...key.split('/'));
  }

  private tmpPath(): string {
    return join(this.dir, TMP_DIR, randomUUID());
  }

  /** Renames a synced temporary file to the key's path and syncs the directory that now holds it. */
  private commit(tmp: string, key: string): Promise<void> {
    return this.commitTo(tmp, this.path(key));
  }

  private async commitTo(tmp: string, target: string, { create = true } = {}): Promise<void> {
    if (create) await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    await rename(tmp, target);
    const dir = await open(dirname(target), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  private async *walk(at: string): AsyncIterable<ObjectInfo> {
    const entries = await readdir(this.path(at), { withFileTypes: true }).catch(absent);
    if (!entries) return;
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      // Hidden names are the store's own (unfinished uploads' parts), never objects.
      if (e.name.startsWith('.')) continue;
      const key = `${at}/${e.name}`;
      if (e.isDirectory()) yield* this.walk(key);
      else if (e.isFile()) {
        const s = await stat(this.path(key)).catch(absent);
        if (s) yield { key, size: s.size, modifiedAt: s.mtime };
      }
    }
  }
}

function absent(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
  throw error;
}

function refuse(code: ErrorCode, detail: string, path?: string): LocalSignedResponse {
  return refusal(new ApiError(code, detail, path ? { errors: [{ path, message: detail }] } : {}));
}

function refusal(error: ApiError): LocalSignedResponse {
  return { status: error.status, headers: { 'content-type': 'application/problem+json' }, problem: error.toProblem() };
}
