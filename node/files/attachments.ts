import { randomUUID } from 'node:crypto';
import { ApiError, type Logger } from '../../common/index.ts';
import { inspectFile } from './inspect.ts';
import { sizeRefusal, typeRefusal, type FileRules } from './file-rules.ts';
import type { ObjectStore } from './object-store.ts';
import type { FileScanner } from './malware-scan.ts';
import type { StorageQuota } from './quota.ts';
import { FileSweeper, type SweepChecks } from './sweeper.ts';
import { SerialQueue, type AttachmentClaim, type AttachmentLookup, type AttachmentPort } from '../chat/index.ts';
import type { StoredAttachment } from '../store/index.ts';
import type { Attachment, AttachmentAccess, CreateUploadBody, Upload, UploadState } from './schemas.ts';
import { fileKey, prefixOf, sendable, uploadKey, type UploadRecord } from './upload-record.ts';
import { UploadRecords } from './upload-records.ts';
import { signedRequestChecks } from './signed-checks.ts';
import type { SignedRequestCheck } from './local-store.ts';
import { UploadTransfer } from './upload-transfer.ts';

export interface AttachmentLimits {
  /** An upload not sent in a message within this is deleted (ATTACHMENT_UPLOAD_TTL_SECONDS). */
  uploadTtlMs: number;
  /** How long after a deletion, or an upload's end, its files are deleted (ATTACHMENT_DELETE_DELAY_SECONDS). */
  deleteDelayMs: number;
}

export interface AttachmentsOptions {
  store: ObjectStore;
  /** Asked before a file is kept (CLAMAV_ADDRESS); no scan when absent. */
  scanner?: FileScanner;
  limits: AttachmentLimits;
  /** Each application's largest file, total bytes and types (its settings within the deployment's). */
  rules: FileRules;
  /** The chat store's answers the sweeper and downloads need. */
  checks: SweepChecks;
  log: Logger;
  now?: () => Date;
  /** Attachment bytes an application stores changed (finalized: more; deleted: fewer), for usage. */
  storedBytes?: (appId: string, bytes: number) => void;
  /** Whether this node runs the sweep now (see SweeperOptions); every node when absent. */
  sweepHere?: () => Promise<boolean>;
  /** Message and chat deletions carry their files' deletion in the outbox (FileDeletions): no marker for them. */
  deletionsInOutbox?: boolean;
  /** Where each application's total bytes are counted against its rule's; no limit when absent. */
  quota?: StorageQuota;
  /**
   * An upload was finalized or refused here: tell the other nodes (the cluster bus), so the one
   * that took it stops holding its size (see `uploadReleased`).
   */
  released?: (appId: string, uploadId: string) => void;
}

/** How long a signed download URL works: a member who leaves keeps at most this much access. */
export const DOWNLOAD_URL_SECONDS = 5 * 60;
/**
 * Finalizes (reading and processing a file, up to ATTACHMENT_MAX_BYTES in memory) one node runs at
 * once; more wait their turn, holding nothing, up to MAX_WAITING_FINALIZES, past which they are
 * refused with UNAVAILABLE and a Retry-After.
 */
const MAX_CONCURRENT_FINALIZES = 4;
const MAX_WAITING_FINALIZES = 256;
/** Finalizes of one upload queued on a node (retries of one request): more are refused like the above. */
const MAX_FINALIZES_PER_UPLOAD = 8;

const busy = () => new ApiError('UNAVAILABLE', 'this node is finalizing as many files as it can: retry shortly', { retryAfterSeconds: 1 });

/** Who asks: a member of the chat (the caller checks membership before each call). */
export interface Uploader {
  appId: string;
  userId: string;
}

/**
 * Attachments: an upload asked for by a member of a chat, its bytes put straight to the object
 * store through a signed URL, then finalized here (the bytes checked, sniffed, refused or kept, an
 * image stripped of its metadata with a thumbnail and a placeholder made); then any member can ask
 * for short-lived signed URLs of the file and its thumbnail.
 *
 * Keys: `a/{appId}/{chatId}/{uploadId}/` holds `record.json`, `upload` (the bytes as put), `file`
 * (the checked bytes) and, for an image, `thumb`; so an application's and a chat's files are each
 * one prefix (tenancy in every key).
 *
 * Guarantees: a file is never served before its finalize has checked it; the bytes served are
 * the ones checked, written by finalize to a key no signed URL names, so an upload URL still valid
 * after finalize cannot replace them; finalize is idempotent (again: the same attachment); a
 * refused file's bytes are deleted at once; the uploader's claims (size, type) are checked against
 * the stored bytes, never trusted.
 */
export class Attachments implements AttachmentPort {
  private finalizing = 0;
  private readonly waiting: (() => void)[] = [];
  /** Each upload being finalized here, by its prefix: its finalizes one after the other. */
  private readonly finalizeQueues = new Map<string, SerialQueue>();
  /** Each application's rule; `rules.changed(appId)` when its settings change. */
  readonly rules: FileRules;
  private readonly store: ObjectStore;
  private readonly scanner: FileScanner | undefined;
  private readonly limits: AttachmentLimits;
  private readonly checks: SweepChecks;
  private readonly now: () => Date;
  private readonly storedBytes: ((appId: string, bytes: number) => void) | undefined;
  private readonly quota: StorageQuota | undefined;
  private readonly transfer: UploadTransfer;
  private readonly released: ((appId: string, uploadId: string) => void) | undefined;
  private readonly records: UploadRecords;
  private readonly log: Logger;
  /** Deletes what nothing needs any more (see sweeper.ts); the node starts it (`sweeper.start`). */
  readonly sweeper: FileSweeper;

  constructor(o: AttachmentsOptions) {
    this.store = o.store;
    this.scanner = o.scanner;
    this.limits = o.limits;
    this.checks = o.checks;
    this.now = o.now ?? (() => new Date());
    this.rules = o.rules;
    this.storedBytes = o.storedBytes;
    this.quota = o.quota;
    this.transfer = new UploadTransfer(o.store, this.now);
    this.released = o.released;
    this.records = new UploadRecords(o.store);
    this.log = o.log;
    this.sweeper = new FileSweeper(o.store, o.checks, o.log, () => this.now().getTime(), {
      ...(o.sweepHere ? { sweepHere: o.sweepHere } : {}),
      ...(o.deletionsInOutbox ? { deletionsInOutbox: true } : {}),
      ...(o.storedBytes
        ? {
            usage: {
              finalized: async (appId: string, chatId: string, uploadId: string) => (await this.readRecord(appId, chatId, uploadId))?.attachment !== undefined,
              deleted: (appId: string, bytes: number) => o.storedBytes!(appId, -bytes),
            },
          }
        : {}),
    });
  }

  /** The chat's deletion of a message that holds files (AttachmentPort): they go once it is durable. */
  messageDeleting(appId: string, chatId: string, messageId: string, uploadIds: readonly string[]): Promise<void> {
    const due = this.now().getTime() + this.limits.deleteDelayMs;
    return Promise.all(uploadIds.map((uploadId) => this.sweeper.mark({ kind: 'message', appId, chatId, messageId, uploadId }, due))).then(() => undefined);
  }

  /** An application was deleted: every file of it goes (its absence is checked again when due). */
  appDeleted(appId: string): Promise<void> {
    return this.sweeper.mark({ kind: 'app', appId }, this.now().getTime() + this.limits.deleteDelayMs);
  }

  /** The chat's own deletion (AttachmentPort): every file of the chat goes once it is gone. */
  chatDeleting(appId: string, chatId: string): Promise<void> {
    return this.sweeper.mark({ kind: 'chat', appId, chatId }, this.now().getTime() + this.limits.deleteDelayMs);
  }

  async createUpload(who: Uploader, chatId: string, body: CreateUploadBody): Promise<Upload | ApiError> {
    const rule = await this.rules.get(who.appId);
    const refusal = sizeRefusal(rule, body.size) ?? (body.type === undefined ? undefined : typeRefusal(rule, body.type, '/body/type'));
    if (refusal) return refusal;
    const id = randomUUID();
    const now = this.now();
    // Held until the upload is finalized or refused (here, or on another node, which says so on
    // the bus) or expires (until then URLs to put its bytes can be asked for again).
    const over = await this.quota?.take(who.appId, rule.maxTotalBytes, id, body.size, now.getTime() + this.limits.uploadTtlMs);
    if (over) return over;
    try {
      return await this.startUpload(who, chatId, body, id, now);
    } catch (error) {
      this.quota?.release(id);
      throw error;
    }
  }

  private async startUpload(who: Uploader, chatId: string, body: CreateUploadBody, id: string, now: Date): Promise<Upload> {
    const record: UploadRecord = {
      v: 2,
      id,
      appId: who.appId,
      chatId,
      uploaderId: who.userId,
      name: body.name,
      size: body.size,
      ...(body.type === undefined ? {} : { declaredType: body.type }),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + this.limits.uploadTtlMs).toISOString(),
    };
    // The marker first: an upload is never left without the deletion that ends it (which also
    // ends its multipart upload, parts and all: see ObjectStore.deletePrefix).
    await this.sweeper.mark({ kind: 'upload', appId: who.appId, chatId, uploadId: id }, now.getTime() + this.limits.uploadTtlMs + this.limits.deleteDelayMs);
    if (body.multipart) record.multipartId = await this.store.createMultipart(uploadKey(record), body.type ?? 'application/octet-stream');
    await this.writeRecord(record);
    return { uploadId: id, ...(await this.transfer.requests(record)), expiresAt: record.expiresAt };
  }

  /**
   * Where an upload of the caller's stands (the uploader only): finalized with its attachment, or
   * the bytes received so far with fresh URLs for the rest, so an interrupted upload resumes.
   */
  async uploadState(who: Uploader, chatId: string, uploadId: string): Promise<UploadState | ApiError> {
    const record = await this.readRecord(who.appId, chatId, uploadId);
    if (!record || record.uploaderId !== who.userId || this.expired(record)) return new ApiError('UPLOAD_NOT_FOUND', 'no such upload of yours in this chat (or it expired)');
    const about = { uploadId: record.id, name: record.name, size: record.size, expiresAt: record.expiresAt };
    if (record.attachment) return { ...about, finalized: true, attachment: record.attachment, received: record.size };
    return { ...about, finalized: false, ...(await this.transfer.state(record)) };
  }

  /**
   * Checks the uploaded bytes and makes the attachment; idempotent. Only the uploader may finalize.
   * One finalize of an upload runs at a time on this node: a retry racing the first waits for it
   * and answers its attachment, so usage counts the bytes once (across nodes, see `finalizeNow`).
   */
  async finalize(who: Uploader, chatId: string, uploadId: string): Promise<Attachment | ApiError> {
    const record = await this.readRecord(who.appId, chatId, uploadId);
    if (!record || record.uploaderId !== who.userId || this.expired(record)) return new ApiError('UPLOAD_NOT_FOUND', 'no such upload of yours in this chat (or it expired)');
    if (record.attachment) return record.attachment;
    const key = prefixOf(record);
    let queue = this.finalizeQueues.get(key);
    if (!queue && this.finalizeQueues.size >= MAX_WAITING_FINALIZES) return busy();
    if (queue && queue.length >= MAX_FINALIZES_PER_UPLOAD) return busy();
    if (!queue) this.finalizeQueues.set(key, (queue = new SerialQueue()));
    const mine = queue;
    return mine.run(() => this.finalizeNow(record)).finally(() => {
      if (mine.length === 0 && this.finalizeQueues.get(key) === mine) this.finalizeQueues.delete(key);
    });
  }

  /**
   * One finalize, the only one of its upload on this node. Another node may finalize it at the
   * same time (a retry sent elsewhere): then its record is read again before anything is deleted
   * or written, and an attachment already recorded is answered as it is. Two that overlap exactly
   * may each count the bytes in usage; neither ever deletes the other's file.
   */
  private async finalizeNow(asked: UploadRecord): Promise<Attachment | ApiError> {
    // Read again: a finalize this one waited for may have ended it (finalized, or refused and deleted).
    const record = await this.readRecord(asked.appId, asked.chatId, asked.id);
    if (!record) return new ApiError('UPLOAD_NOT_FOUND', 'no such upload of yours in this chat (or it expired)');
    if (record.attachment) return record.attachment;
    const incomplete = await this.transfer.assemble(record);
    if (incomplete) return incomplete;
    const source = await this.sourceOf(record);
    if (!source) return (await this.recordedElsewhere(record)) ?? new ApiError('UPLOAD_INCOMPLETE', 'no bytes were put for this upload yet: PUT them to its URL first');
    const turn = await this.takeTurn();
    if (turn) return turn;
    try {
      // These bytes, as read once, are what is checked and what is kept: the object they were read
      // from may be put again meanwhile (a URL still valid), never the final key they go to.
      const bytes = await this.store.read(source.key);
      if (!bytes) return (await this.recordedElsewhere(record)) ?? new ApiError('UPLOAD_INCOMPLETE', 'the uploaded file is gone: put it again');
      const verdict = await this.scanner?.scan(bytes);
      if (verdict?.infected) {
        return this.refuse(record, new ApiError('FILE_INFECTED', `the malware scanner found ${verdict.signature}: the file was deleted`, { errors: [{ path: '/file', message: `infected: ${verdict.signature}` }] }));
      }
      const file = await inspectFile(bytes);
      // The rule as it is now: settings changed since the upload was asked for apply.
      const refusal = typeRefusal(await this.rules.get(record.appId), file.type, '/file');
      if (refusal) return this.refuse(record, refusal);
      if ('unreadable' in file) {
        const why = `a ${file.type} image must be readable, to strip its metadata: ${file.unreadable}`;
        return this.refuse(record, new ApiError('IMAGE_UNREADABLE', `${why}; the file was deleted`, { errors: [{ path: '/file', message: why }] }));
      }
      const done = await this.recordedElsewhere(record);
      if (done) return done;
      const kept = source.checked ? bytes : file.bytes;
      if (kept !== bytes || source.key !== fileKey(record)) await this.store.put(fileKey(record), kept, file.type);
      if (file.image) await this.store.put(`${prefixOf(record)}/thumb`, file.image.thumbnail.bytes, file.image.thumbnail.type);
      const attachment: Attachment = {
        id: record.id,
        name: record.name,
        size: kept.length,
        type: file.type,
        ...(file.image
          ? {
              width: file.image.width,
              height: file.image.height,
              placeholder: file.image.placeholder,
              thumbnail: { width: file.image.thumbnail.width, height: file.image.thumbnail.height, type: file.image.thumbnail.type },
            }
          : {}),
      };
      await this.writeRecord({ ...record, attachment });
      this.storedBytes?.(record.appId, kept.length + (file.image?.thumbnail.bytes.length ?? 0));
      this.ended(record);
      // The bytes as put are not needed any more; left behind (the store down), or put again by
      // a URL still valid, they are never served and go with the upload's prefix.
      if (source.key !== fileKey(record)) await this.store.delete(source.key).catch((error: unknown) => this.log.warn({ err: String(error), key: source.key }, 'finalize: the uploaded copy stays until its upload is deleted'));
      return attachment;
    } finally {
      // The turn passes to the next waiting finalize, if any, else it is given back.
      const next = this.waiting.shift();
      if (next) next();
      else this.finalizing--;
    }
  }

  /**
   * Where the bytes to finalize are: the final key when a finalize already wrote it (another
   * node's, still running or stopped midway: `checked`, kept as they are), else where they were put.
   * For a `v: 2` record only finalize writes the final key. A `v: 1` record's bytes are put there
   * too; signed PUTs and multipart parts store exactly the declared size (both stores refuse any
   * other), so there a file of another size is one a finalize already rewrote.
   */
  private async sourceOf(record: UploadRecord): Promise<{ key: string; checked: boolean } | undefined> {
    const final = await this.store.head(fileKey(record));
    if (final && (record.v !== 1 || final.size !== record.size)) return { key: fileKey(record), checked: true };
    if (record.v === 1) return final ? { key: fileKey(record), checked: false } : undefined;
    return (await this.store.head(uploadKey(record))) ? { key: uploadKey(record), checked: false } : undefined;
  }

  /** A turn among the MAX_CONCURRENT_FINALIZES, waited for; UNAVAILABLE when too many wait already. */
  private async takeTurn(): Promise<ApiError | undefined> {
    if (this.finalizing < MAX_CONCURRENT_FINALIZES) {
      this.finalizing++;
      return undefined;
    }
    if (this.waiting.length >= MAX_WAITING_FINALIZES) return busy();
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    return undefined;
  }

  /** A refused file's upload deleted, files and all, unless another node finalized it meanwhile (then its attachment). */
  private async refuse(record: UploadRecord, refusal: ApiError): Promise<Attachment | ApiError> {
    const done = await this.recordedElsewhere(record);
    if (done) return done;
    await this.store.deletePrefix(`${prefixOf(record)}/`);
    this.ended(record);
    return refusal;
  }

  /** The attachment another node's finalize of `record` recorded, read from the store, if any. */
  private async recordedElsewhere(record: UploadRecord): Promise<Attachment | undefined> {
    return (await this.readRecord(record.appId, record.chatId, record.id, true))?.attachment;
  }

  /**
   * The chat's claim of finalized uploads for one message (AttachmentPort): each must be the
   * sender's, of this chat, finalized, not expired, and carried by no other message (`heldBy`:
   * the message store, which records the holder in the message's own write, or the actor's claims
   * in flight). Reads only: a finalized record usually from memory.
   */
  async claim(c: AttachmentClaim): Promise<StoredAttachment[] | ApiError> {
    const [records, holders] = await Promise.all([Promise.all(c.uploadIds.map((id) => this.readRecord(c.appId, c.chatId, id))), Promise.all(c.uploadIds.map((id) => c.heldBy(id)))]);
    return sendable(c.senderId, records, holders, c.messageId, this.now().getTime());
  }

  /** The attachments a send names, for its before-send hook (AttachmentPort): `claim`'s checks but the holder's. */
  async describe(c: AttachmentLookup): Promise<StoredAttachment[] | ApiError> {
    const records = await Promise.all(c.uploadIds.map((id) => this.readRecord(c.appId, c.chatId, id)));
    return sendable(c.senderId, records, [], undefined, this.now().getTime());
  }

  /**
   * Signed URLs of a finalized file and its thumbnail, for a member of its chat: of a file in a
   * message that is shown (not deleted, not hidden pending review), or of an upload of the caller's
   * own not yet sent.
   */
  async access(who: Uploader, chatId: string, attachmentId: string): Promise<AttachmentAccess | ApiError> {
    const [record, holderId] = await Promise.all([this.readRecord(who.appId, chatId, attachmentId), this.checks.holder(who.appId, chatId, attachmentId)]);
    const holder = holderId === undefined ? 'absent' : await this.checks.message(who.appId, chatId, holderId);
    const shown = holder === 'live' || (holderId === undefined && record?.uploaderId === who.userId && !this.expired(record));
    if (!record?.attachment || !shown) return new ApiError('ATTACHMENT_NOT_FOUND', 'no such attachment in this chat');
    const a = record.attachment;
    // Images the browser shows inline; anything else downloads under its name, never rendered.
    const inline = a.thumbnail !== undefined;
    const url = await this.store.presignGet(fileKey(record), { expiresInSeconds: DOWNLOAD_URL_SECONDS, contentType: inline ? a.type : 'application/octet-stream', ...(inline ? {} : { downloadName: a.name }) });
    const thumbnailUrl = a.thumbnail ? await this.store.presignGet(`${prefixOf(record)}/thumb`, { expiresInSeconds: DOWNLOAD_URL_SECONDS, contentType: a.thumbnail.type }) : undefined;
    return { attachment: a, url, ...(thumbnailUrl ? { thumbnailUrl } : {}), expiresAt: new Date(this.now().getTime() + DOWNLOAD_URL_SECONDS * 1000).toISOString() };
  }

  /** The checks of requests to the embedded store's signed URLs (see signed-checks.ts). */
  signedRequestChecks(): SignedRequestCheck {
    return signedRequestChecks(this.records, this.checks, this.now);
  }

  /** Another node finalized or refused an upload: if this node took it, its size is no longer held. */
  uploadReleased(uploadId: string): void {
    this.quota?.release(uploadId);
  }

  /** An upload's bytes are counted by usage from now (or were refused): its hold ends here and on the node that took it. */
  private ended(record: UploadRecord): void {
    this.quota?.release(record.id);
    this.released?.(record.appId, record.id);
  }

  private expired(record: UploadRecord): boolean {
    return Date.parse(record.expiresAt) <= this.now().getTime();
  }

  private readRecord(appId: string, chatId: string, uploadId: string, fresh = false): Promise<UploadRecord | undefined> {
    return this.records.read(appId, chatId, uploadId, fresh);
  }

  private writeRecord(record: UploadRecord): Promise<void> {
    return this.records.write(record);
  }
}
