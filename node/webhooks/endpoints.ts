import { RecentMap } from '../../common/cache/index.ts';
import type { HookEndpoint, WebhookSource } from './source.ts';

interface Cached {
  at: number;
  endpoints: Promise<HookEndpoint[]>;
  /** Set once `endpoints` resolved: what the hot path reads without waiting. */
  ready?: HookEndpoint[];
}

/**
 * Each application's webhook endpoints, cached per node: read from the control store at most once
 * per `ttlMs` per application, and dropped at once when the control service says they changed
 * (in-process, or on the cluster bus). A failed read answers the last list read, if there is one
 * (and is tried again on the next call), else rejects. Memory: one entry per application that
 * wrote something while its entry was fresh.
 */
export class EndpointCache {
  /** At most 10,000 applications' endpoints. */
  private readonly cache = new RecentMap<string, Cached>(10_000);

  constructor(
    private readonly source: WebhookSource,
    private readonly ttlMs: number,
  ) {}

  /** The application's endpoints: synchronously when cached and fresh, else a promise. */
  get(appId: string): HookEndpoint[] | Promise<HookEndpoint[]> {
    const now = Date.now();
    const hit = this.cache.get(appId);
    if (hit && now - hit.at < this.ttlMs) return hit.ready ?? hit.endpoints;
    const stale = hit?.ready;
    const entry: Cached = {
      at: now,
      endpoints: this.source.list(appId).catch((error: unknown) => {
        if (this.cache.get(appId) === entry) this.cache.delete(appId);
        if (stale) return stale;
        throw error;
      }),
    };
    entry.endpoints.then(
      (list) => (entry.ready = list),
      () => {},
    );
    this.cache.set(appId, entry);
    return entry.endpoints;
  }

  invalidate(appId: string): void {
    this.cache.delete(appId);
  }
}

/** Whether an active endpoint of `endpoints` is subscribed to `type` (no list made: every write asks). */
export function anySubscribed(endpoints: readonly HookEndpoint[], type: string): boolean {
  for (const e of endpoints) if (e.status === 'ACTIVE' && e.events.includes(type)) return true;
  return false;
}
