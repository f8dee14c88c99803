import { RecentMap } from '../../common/cache/index.ts';
import { ApiError, BackendUnavailableError } from '../../common/index.ts';

/** Where the bytes an application stores are counted. */
export interface QuotaUsage {
  /** As the store has them (the control store's usage figure). */
  stored(appId: string): Promise<number>;
  /** Counted on this node since its last flush to the store. */
  unflushed(appId: string): number;
  /** How many flushes this node has made: a figure read before the last one lacks what it flushed. */
  flushes(): number;
}

export interface StorageQuotaOptions {
  usage: QuotaUsage;
  /** How long a figure read is used before it is read again. */
  ttlMs: number;
  now?: () => number;
}

interface Reservation {
  appId: string;
  size: number;
  until: number;
  released: boolean;
}

/** Open uploads a node keeps reserved (about 100 bytes each); past this, new uploads wait (503). */
const MAX_RESERVATIONS = 100_000;

/**
 * The total-bytes limit of each application's attachments. An upload is refused when it is asked
 * for (before any byte is stored) if the application's stored bytes, plus the uploads this node has
 * open for it, plus its size would pass the limit.
 *
 * The stored bytes are the usage figure (files and thumbnails, counted at finalize, uncounted when
 * the sweep deletes them), read at most once per `ttlMs` per application and again after each of
 * this node's flushes, plus what this node counted and has not flushed yet. So the limit is exact
 * with one node; several nodes together may pass it by what the others finalized within one
 * flush interval (USAGE_FLUSH_SECONDS) and `ttlMs`. An open upload holds its declared size until it
 * is finalized or refused (here, or on another node, which says so on the cluster bus: at most
 * once, so a lost message leaves the hold to its end) or expires (until then its bytes may still be
 * put, through URLs signed again).
 *
 * Costs: a check is O(1) plus at most one store read per application per `ttlMs` (concurrent checks
 * share it); expired reservations are dropped in order of creation (they all live one upload TTL).
 */
export class StorageQuota {
  private readonly figures = new RecentMap<string, { bytes: number; until: number; flushes: number }>(MAX_RESERVATIONS);
  private readonly reading = new Map<string, Promise<number>>();
  private readonly open = new Map<string, Reservation>();
  /** Reservations in order of expiry (one TTL for all: the order they were made). */
  private readonly queue: { id: string; r: Reservation }[] = [];
  private head = 0;
  private readonly reserved = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly o: StorageQuotaOptions) {
    this.now = o.now ?? Date.now;
  }

  /**
   * Takes `size` bytes of the application's limit (`maxTotalBytes`; 0: none) for upload `uploadId` until `release` or `until`,
   * or refuses them when they would take it past the limit. The check and the taking are one step
   * (nothing is awaited between them), so concurrent uploads cannot both take the last bytes.
   */
  async take(appId: string, maxTotalBytes: number, uploadId: string, size: number, until: number): Promise<ApiError | undefined> {
    if (maxTotalBytes === 0) return undefined;
    const stored = await this.storedBytes(appId);
    this.expire();
    if (this.open.size >= MAX_RESERVATIONS) return new ApiError('UNAVAILABLE', 'this node has as many uploads open as it keeps: retry shortly', { retryAfterSeconds: 1 });
    const used = stored + this.o.usage.unflushed(appId) + (this.reserved.get(appId) ?? 0);
    if (used + size <= maxTotalBytes) {
      this.reserve(appId, uploadId, size, until);
      return undefined;
    }
    const left = Math.max(0, maxTotalBytes - used);
    return new ApiError('STORAGE_QUOTA_EXCEEDED', `the application stores ${used} of its ${maxTotalBytes} attachment bytes (uploads in progress included): ${left} left`, {
      errors: [{ path: '/body/size', message: `must be at most ${left} (what is left of the application's ${maxTotalBytes} bytes)` }],
    });
  }

  private reserve(appId: string, uploadId: string, size: number, until: number): void {
    const r: Reservation = { appId, size, until, released: false };
    this.open.set(uploadId, r);
    this.queue.push({ id: uploadId, r });
    this.reserved.set(appId, (this.reserved.get(appId) ?? 0) + size);
  }

  /** An upload finalized, refused or not made: its bytes are counted by usage (or not at all) from now. */
  release(uploadId: string): void {
    const r = this.open.get(uploadId);
    if (!r) return;
    this.open.delete(uploadId);
    this.drop(r);
  }

  private drop(r: Reservation): void {
    if (r.released) return;
    r.released = true;
    const left = (this.reserved.get(r.appId) ?? 0) - r.size;
    if (left > 0) this.reserved.set(r.appId, left);
    else this.reserved.delete(r.appId);
  }

  private expire(): void {
    const now = this.now();
    while (this.head < this.queue.length && this.queue[this.head]!.r.until <= now) {
      const { id, r } = this.queue[this.head++]!;
      if (this.open.get(id) === r) this.open.delete(id);
      this.drop(r);
    }
    // Compacted now and then, so the array does not keep what it has passed.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  private async storedBytes(appId: string): Promise<number> {
    const known = this.figures.get(appId);
    const flushes = this.o.usage.flushes();
    // A figure read before this node's last flush lacks what it flushed (no longer unflushed here).
    if (known && known.until > this.now() && known.flushes === flushes) return known.bytes;
    let pending = this.reading.get(appId);
    if (!pending) {
      pending = this.o.usage.stored(appId).finally(() => this.reading.delete(appId));
      this.reading.set(appId, pending);
    }
    try {
      const bytes = await pending;
      // Bounded (RecentMap): one figure per application asking within a TTL; older ones are dropped first.
      this.figures.set(appId, { bytes, until: this.now() + this.o.ttlMs, flushes });
      return bytes;
    } catch (error) {
      // The store cannot say now: the last figure stands; without one, the upload waits (503).
      if (known) return known.bytes;
      throw new BackendUnavailableError('usage (stored attachment bytes)', { cause: error });
    }
  }
}
