import { ApiError } from '../../common/index.ts';
import type { ModerationStore } from '../store/index.ts';
import { Blocklist } from './blocklist.ts';

/** How long a node trusts the blocklist it read: bounds how late it applies a change it was not told of. */
export const BLOCKLIST_TTL_MS = 30_000;

interface Cached {
  version: string | undefined;
  list: Blocklist | undefined;
  until: number;
  reading?: Promise<Blocklist | undefined>;
}

/**
 * Each application's compiled blocklist on this node: read at most once per BLOCKLIST_TTL_MS (and
 * at once after `changed`, which a change on any node announces), compiled again only when its
 * version changed. `screen` is what sends and edits pass their content through.
 */
export class Blocklists {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly store: ModerationStore,
    private readonly ttlMs = BLOCKLIST_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  get(appId: string): Blocklist | undefined | Promise<Blocklist | undefined> {
    const hit = this.cache.get(appId);
    if (hit && hit.until > this.now()) return hit.list;
    if (hit?.reading) return hit.reading;
    const entry: Cached = hit ?? { version: undefined, list: undefined, until: 0 };
    entry.reading = this.store.blocklist(appId).then(
      (stored) => {
        if (stored?.version !== entry.version) {
          entry.version = stored?.version;
          entry.list = stored && stored.entries.length > 0 ? new Blocklist(stored.entries) : undefined;
        }
        entry.until = this.now() + this.ttlMs;
        entry.reading = undefined;
        return entry.list;
      },
      (error: unknown) => {
        entry.reading = undefined;
        // The store cannot say: the list last read stands while it is down; without one, the send waits for the store like any other write.
        if (entry.version !== undefined || hit) return entry.list;
        throw error;
      },
    );
    if (this.cache.size >= 10_000 && !hit) this.cache.clear();
    this.cache.set(appId, entry);
    return entry.reading;
  }

  /** Read again before the next use (a change here, or announced). */
  changed(appId: string): void {
    const hit = this.cache.get(appId);
    if (hit) hit.until = 0;
  }

  /** `content` as the application's blocklist leaves it: refused (CONTENT_BLOCKED), masked, or as is. */
  screen(appId: string, content: string): ApiError | string | Promise<ApiError | string> {
    const list = this.get(appId);
    return list instanceof Promise ? list.then((l) => verdict(l, content)) : verdict(list, content);
  }
}

function verdict(list: Blocklist | undefined, content: string): ApiError | string {
  const v = list?.check(content);
  if (!v) return content;
  if (v.action === 'block') return new ApiError('CONTENT_BLOCKED', "the message contains a word or phrase this application's blocklist refuses");
  return v.text;
}
