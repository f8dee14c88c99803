import type { Logger } from '../../common/index.ts';
import type { UsageDelta, UsageSink } from '../../common/usage/index.ts';

export interface UsageMeterOptions {
  /** Absent: counts are kept nowhere (a node without a control store, as in some tests). */
  sink?: UsageSink;
  nodeId: string;
  /** USAGE_FLUSH_SECONDS, in ms. */
  flushMs: number;
  /** Distinct users of the application connected now, cluster-wide (presence) or on this node alone. */
  usersOnline: (appId: string) => ReadonlySet<string> | Promise<ReadonlySet<string>>;
  /** Users of the application with a socket on this node now. */
  localUsers: (appId: string) => number;
  log: Logger;
  now?: () => Date;
}

/** How often connection changes are sampled, at most, per application (ms). */
const SAMPLE_MS = 1_000;
const DAY_MS = 86_400_000;
const dayOf = (d: Date) => d.toISOString().slice(0, 10);

/**
 * A node's usage counts per application, added up in memory and flushed to the control store
 * every USAGE_FLUSH_SECONDS as one delta per application: the cost per counted event is a map
 * update, and the store sees a few statements per application per interval however busy it is.
 *
 * Concurrent users are sampled, not counted: the cluster-wide number (presence) is read at most
 * once a second for an application whose connections changed on this node, and once per flush
 * for one with users connected here. The daily peak is the highest sample, so a peak shorter than
 * a second may be missed. When nobody is connected anywhere the last sample says 0 (the node
 * where the last user left samples after it left).
 *
 * A failed flush keeps its counts for the next one: nothing counted is dropped while the store
 * is away (memory stays bounded by the applications active meanwhile).
 */
export class UsageMeter {
  private pending = new Map<string, UsageDelta>();
  /** Applications whose connections changed since their last sample, or that have users here. */
  private readonly watched = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly now: () => Date;
  private readonly flushTimer: NodeJS.Timeout | undefined;
  private readonly sampleTimer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  /** The counts of the flush being written, until the store has them. */
  private writing = new Map<string, UsageDelta>();
  private flushesDone = 0;
  /** The UTC day last counted in, and its bounds (ms): its name is made once a day, not per write. */
  private day = { from: 0, to: 0, name: '' };

  constructor(private readonly options: UsageMeterOptions) {
    this.now = options.now ?? (() => new Date());
    if (options.sink) {
      this.flushTimer = setInterval(() => void this.flush(), options.flushMs);
      this.flushTimer.unref();
    }
    this.sampleTimer = setInterval(() => void this.sampleDirty(), SAMPLE_MS);
    this.sampleTimer.unref();
  }

  userRegistered(appId: string): void {
    this.delta(appId).users++;
  }

  userDeleted(appId: string): void {
    this.delta(appId).users--;
  }

  chatCreated(appId: string): void {
    this.delta(appId).chats++;
  }

  chatDeleted(appId: string): void {
    this.delta(appId).chats--;
  }

  /** `n` new messages of the application were made durable (counted once, by the chat's owner). */
  messagesStored(appId: string, n: number): void {
    const messages = this.delta(appId).messages;
    const day = this.today();
    messages[day] = (messages[day] ?? 0) + n;
  }

  /** The current UTC day, YYYY-MM-DD. */
  private today(): string {
    const t = this.now().getTime();
    if (t < this.day.from || t >= this.day.to) {
      const from = t - (t % DAY_MS);
      this.day = { from, to: from + DAY_MS, name: new Date(from).toISOString().slice(0, 10) };
    }
    return this.day.name;
  }

  /** Attachment bytes the application stores changed by `bytes` (finalized: more; deleted: fewer). */
  filesStored(appId: string, bytes: number): void {
    const d = this.delta(appId);
    d.fileBytes = (d.fileBytes ?? 0) + bytes;
  }

  /** Attachment bytes counted here and not yet in the store (pending, or being written). */
  unflushedFileBytes(appId: string): number {
    return (this.pending.get(appId)?.fileBytes ?? 0) + (this.writing.get(appId)?.fileBytes ?? 0);
  }

  /** How many flushes have reached the store: a figure read before the last one lacks its counts. */
  get flushes(): number {
    return this.flushesDone;
  }

  keyUsed(appId: string, keyId: string): void {
    this.delta(appId).keysUsed[keyId] = this.now().toISOString();
  }

  /** A user's socket opened or closed here: the application's concurrent users are sampled soon. */
  connectionsChanged(appId: string): void {
    this.watched.add(appId);
    this.dirty.add(appId);
  }

  /** Adds the counts so far to the store (one flush at a time); on failure they wait for the next. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushOnce());
    return this.flushing;
  }

  /** Stops the timers and flushes what is left. */
  async close(): Promise<void> {
    if (this.flushTimer) clearInterval(this.flushTimer);
    clearInterval(this.sampleTimer);
    if (this.options.sink) await this.flush();
  }

  private async flushOnce(): Promise<void> {
    const sink = this.options.sink;
    if (!sink) return;
    await Promise.all([...this.watched].map((appId) => this.sample(appId)));
    for (const appId of this.watched) if (this.options.localUsers(appId) === 0 && !this.dirty.has(appId)) this.watched.delete(appId);
    const batch = this.pending;
    if (batch.size === 0) return;
    this.pending = new Map();
    this.writing = batch;
    try {
      await sink.record(this.options.nodeId, [...batch.values()]);
      this.flushesDone++;
    } catch (error) {
      this.options.log.warn({ err: String(error), applications: batch.size }, 'cannot record usage; keeping the counts for the next flush');
      for (const d of batch.values()) this.merge(d);
    } finally {
      this.writing = new Map();
    }
  }

  private async sampleDirty(): Promise<void> {
    const apps = [...this.dirty];
    this.dirty.clear();
    await Promise.all(apps.map((appId) => this.sample(appId)));
  }

  private async sample(appId: string): Promise<void> {
    let users: number;
    try {
      users = (await this.options.usersOnline(appId)).size;
    } catch {
      return; // presence is away: no sample this time
    }
    const now = this.now();
    const d = this.delta(appId);
    const day = dayOf(now);
    const c = (d.concurrent ??= { peaks: {}, current: users, at: now.toISOString() });
    c.peaks[day] = Math.max(c.peaks[day] ?? 0, users);
    if (c.at <= now.toISOString()) Object.assign(c, { current: users, at: now.toISOString() });
  }

  private delta(appId: string): UsageDelta {
    let d = this.pending.get(appId);
    if (!d) this.pending.set(appId, (d = { appId, users: 0, chats: 0, messages: {}, keysUsed: {} }));
    return d;
  }

  /** Folds a delta that could not be stored back into the pending counts. */
  private merge(old: UsageDelta): void {
    const d = this.delta(old.appId);
    d.users += old.users;
    d.chats += old.chats;
    if (old.fileBytes) d.fileBytes = (d.fileBytes ?? 0) + old.fileBytes;
    for (const [day, n] of Object.entries(old.messages)) d.messages[day] = (d.messages[day] ?? 0) + n;
    for (const [keyId, at] of Object.entries(old.keysUsed)) if (!d.keysUsed[keyId] || d.keysUsed[keyId]! < at) d.keysUsed[keyId] = at;
    if (old.concurrent) {
      const c = (d.concurrent ??= { peaks: {}, current: old.concurrent.current, at: old.concurrent.at });
      for (const [day, peak] of Object.entries(old.concurrent.peaks)) c.peaks[day] = Math.max(c.peaks[day] ?? 0, peak);
    }
  }
}
