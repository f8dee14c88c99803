import { BackendUnavailableError } from '../errors/index.ts';
import { RecentMap } from './recent.ts';

/**
 * Values read per key (an application's settings, say) kept for `ttlMs`: each key read at most
 * once per `ttlMs` (concurrent asks share one read), and again at once after `changed`, which a
 * change announces (in-process, or on the cluster bus). A read that began before a `changed` is
 * answered but not kept. When a read fails, the value last read stands; with none, the caller
 * gets BackendUnavailableError naming `what` (503): nothing is decided on a guess. At most
 * `maxKeys` are kept (the least recently read are forgotten first, by halves: recent.ts).
 */
export class CachedReads<V> {
  private readonly cache: RecentMap<string, { value: V; until: number }>;
  private readonly reading = new Map<string, Promise<V>>();
  private changes = 0;

  constructor(
    private readonly read: (key: string) => Promise<V>,
    private readonly o: { ttlMs: number; what: string; maxKeys?: number; now?: () => number },
  ) {
    this.cache = new RecentMap(o.maxKeys ?? 10_000);
  }

  get(key: string): V | Promise<V> {
    const now = this.o.now ?? Date.now;
    const hit = this.cache.get(key);
    if (hit && hit.until > now()) return hit.value;
    const pending = this.reading.get(key);
    if (pending) return pending;
    const began = this.changes;
    const read = this.read(key).then(
      (value) => {
        if (began !== this.changes) return value;
        this.cache.set(key, { value, until: now() + this.o.ttlMs });
        return value;
      },
      (error: unknown) => {
        if (hit) return hit.value;
        throw new BackendUnavailableError(this.o.what, { cause: error });
      },
    );
    const shared = read.finally(() => {
      if (this.reading.get(key) === shared) this.reading.delete(key);
    });
    this.reading.set(key, shared);
    return shared;
  }

  /** Read again before the next use. */
  changed(key: string): void {
    this.changes++;
    this.cache.delete(key);
    this.reading.delete(key);
  }
}
