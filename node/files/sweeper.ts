import type { Logger } from '../../common/index.ts';
import type { ObjectStore } from './object-store.ts';

/** What the sweeper asks the chat store before it deletes anything. */
export interface SweepChecks {
  /** A message's state: stored and shown, hidden pending review, a tombstone, or never stored. */
  message(appId: string, chatId: string, messageId: string): Promise<'live' | 'hidden' | 'deleted' | 'absent'>;
  chatExists(appId: string, chatId: string): Promise<boolean>;
  /** The message that carries an upload, if one was stored (MessageStore.attachmentHolder). */
  holder(appId: string, chatId: string, uploadId: string): Promise<string | undefined>;
  /** Whether the application still exists. */
  appExists(appId: string): Promise<boolean>;
}

/** A deletion the sweeper makes once it is due, after checking nothing needs the files any more. */
export type FileMarker =
  | { kind: 'upload'; appId: string; chatId: string; uploadId: string }
  | { kind: 'message'; appId: string; chatId: string; messageId: string; uploadId: string }
  | { kind: 'chat'; appId: string; chatId: string }
  | { kind: 'app'; appId: string };

export interface SweeperOptions {
  /**
   * Whether this node sweeps now (in a cluster: the first live node by id), so one node deletes
   * and counts each deletion; every node when absent. A change of the live list may let two sweep
   * at once for a while: deleting twice is harmless, the bytes count may then be off.
   */
  sweepHere?: () => Promise<boolean>;
  /** Usage: the bytes of finalized uploads' files and thumbnails the sweep deletes, per application. */
  /**
   * Message and chat deletions carry their files' deletion in the webhook outbox (FileDeletions),
   * written with the change itself: no marker is written for them here (`mark` resolves at once),
   * so a deletion does not need the object store to be up.
   */
  deletionsInOutbox?: boolean;
  usage?: {
    /** Whether an upload was finalized (only those were counted when stored). */
    finalized(appId: string, chatId: string, uploadId: string): Promise<boolean>;
    deleted(appId: string, bytes: number): void;
  };
}

/** Markers are kept in hourly folders; a start looks this far back for ones still due. */
const LOOKBACK_HOURS = 24 * 7;
const HOUR_MS = 3_600_000;

/**
 * Deletes attachment files when nothing may need them any more, durably and eventually: each
 * deletion is first written as a marker object (`gc/{hour}/{due}.{kind}.…`) in the object store
 * itself, before the change that causes it (a message's or a chat's deletion, an upload's
 * creation), and acted on only once due, after a delay that lets that change land or fail. At due
 * time the marker is checked against the chat store, so a change that failed deletes nothing:
 * - `upload`: the upload's files go unless a stored, not deleted message holds it (an upload never
 *   sent within its time);
 * - `message`: they go if the message that holds them is deleted (or was never stored);
 * - `chat`: every file of the chat goes if the chat is gone;
 * - `app`: every file of the application goes if it is gone (marked when a node hears of the
 *   deletion, which the control service announces after making it).
 * The node `sweepHere` names sweeps (every node without it; deleting twice is harmless); a marker
 * is removed once handled. A marker left by a node that was down longer than a week is not looked
 * for.
 */
export class FileSweeper {
  /** The first hour folder that may still hold a marker not yet due or not yet handled. */
  private fromHour: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly checks: SweepChecks,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly options: SweeperOptions = {},
  ) {
    this.fromHour = Math.floor(now() / HOUR_MS) - LOOKBACK_HOURS;
  }

  /** Records a deletion to make at `dueMs` (durable once this resolves). */
  async mark(marker: FileMarker, dueMs: number): Promise<void> {
    if (this.options.deletionsInOutbox && (marker.kind === 'message' || marker.kind === 'chat')) return;
    const parts = marker.kind === 'upload' ? [marker.uploadId] : marker.kind === 'message' ? [marker.messageId, marker.uploadId] : [];
    const name = [String(dueMs), marker.kind, marker.appId, marker.kind === 'app' ? '0' : marker.chatId, ...parts].join('.');
    await this.store.put(`gc/${hourName(Math.floor(dueMs / HOUR_MS))}/${name}`, new Uint8Array(0), 'application/octet-stream');
  }

  /** Sweeps every `everyMs` until stopped (one sweep at a time). */
  start(everyMs: number): void {
    this.timer = setInterval(() => void this.sweep(), everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One pass over the hour folders from the first with work left to the current one. */
  sweep(): Promise<void> {
    this.running ??= this.pass()
      .catch((error: unknown) => this.log.warn({ err: String(error) }, 'attachment sweep failed; the next one retries'))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<void> {
    if (this.options.sweepHere && !(await this.options.sweepHere())) return;
    const now = this.now();
    const current = Math.floor(now / HOUR_MS);
    let firstLeft: number | undefined;
    for (let hour = this.fromHour; hour <= current; hour++) {
      for await (const o of this.store.list(`gc/${hourName(hour)}/`)) {
        const name = o.key.slice(o.key.lastIndexOf('/') + 1);
        const [due, kind, appId, chatId, a, b] = name.split('.');
        if (Number(due) > now) {
          firstLeft ??= hour;
          continue;
        }
        const marker = markerOf(kind, appId, chatId, a, b);
        if (marker) await this.handle(marker);
        else this.log.warn({ key: o.key }, 'attachment sweep: not a marker; removed');
        await this.store.delete(o.key);
      }
    }
    this.fromHour = firstLeft ?? current;
  }

  /**
   * Makes a deletion now, as a due marker would be (checked against the chat store first, so a
   * change that did not land deletes nothing); rejects when the object store fails, to be tried again.
   */
  collect(m: FileMarker): Promise<void> {
    return this.handle(m);
  }

  private async handle(m: FileMarker): Promise<void> {
    if (m.kind === 'app') {
      if (!(await this.checks.appExists(m.appId))) await this.deleteFiles(m.appId, `a/${m.appId}/`);
      return;
    }
    if (m.kind === 'chat') {
      if (!(await this.checks.chatExists(m.appId, m.chatId))) await this.deleteFiles(m.appId, `a/${m.appId}/${m.chatId}/`);
      return;
    }
    const holderId = await this.checks.holder(m.appId, m.chatId, m.uploadId);
    const holder = holderId === undefined ? 'absent' : await this.checks.message(m.appId, m.chatId, holderId);
    const kept = holder === 'live' || holder === 'hidden';
    // A message marker acts only for the message it names: the upload may be carried by none other.
    const unneeded = m.kind === 'upload' ? !kept : (holderId === undefined || holderId === m.messageId) && !kept;
    if (unneeded) await this.deleteFiles(m.appId, `a/${m.appId}/${m.chatId}/${m.uploadId}/`);
  }

  /**
   * Deletes everything under `prefix` and reports the bytes of finalized uploads' files and
   * thumbnails among it (an unfinalized upload's bytes were never counted).
   */
  private async deleteFiles(appId: string, prefix: string): Promise<void> {
    const usage = this.options.usage;
    // Bytes of files and thumbnails per upload (key a/{app}/{chat}/{upload}/{name}), when counted.
    const uploads = new Map<string, { chatId: string; uploadId: string; bytes: number }>();
    if (usage) {
      for await (const o of this.store.list(prefix)) {
        const [, , chatId, uploadId, name] = o.key.split('/');
        if (!chatId || !uploadId || (name !== 'file' && name !== 'thumb')) continue;
        const key = `${chatId}/${uploadId}`;
        const u = uploads.get(key) ?? { chatId, uploadId, bytes: 0 };
        u.bytes += o.size;
        uploads.set(key, u);
      }
    }
    let bytes = 0;
    for (const u of uploads.values()) if (await usage!.finalized(appId, u.chatId, u.uploadId)) bytes += u.bytes;
    await this.store.deletePrefix(prefix);
    if (bytes > 0) usage!.deleted(appId, bytes);
  }
}

function markerOf(kind: string | undefined, appId: string | undefined, chatId: string | undefined, a: string | undefined, b: string | undefined): FileMarker | undefined {
  if (!appId || !chatId) return undefined;
  if (kind === 'upload' && a) return { kind, appId, chatId, uploadId: a };
  if (kind === 'message' && a && b) return { kind, appId, chatId, messageId: a, uploadId: b };
  if (kind === 'chat') return { kind, appId, chatId };
  if (kind === 'app') return { kind, appId };
  return undefined;
}

/** An hour as `yyyymmddhh` (UTC): folders sort by time. */
function hourName(hour: number): string {
  return new Date(hour * HOUR_MS).toISOString().slice(0, 13).replace(/[-T]/g, '');
}
