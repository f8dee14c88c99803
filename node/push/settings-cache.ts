import { CachedReads } from '../../common/cache/index.ts';
import type { PushSettings } from '../../common/push/index.ts';

/** Where a node reads an application's push settings (the control store). */
export type PushSettingsSource = (appId: string) => Promise<PushSettings | undefined>;

/**
 * Each application's push settings on this node: read at most once per `ttlMs` and again at once
 * after `changed` (see CachedReads); when the source cannot answer, the settings last read stand,
 * and with none the caller gets BackendUnavailableError (503). Without a source, no application
 * has push.
 */
export class PushSettingsCache {
  private readonly reads: CachedReads<PushSettings | undefined> | undefined;

  constructor(source: PushSettingsSource | undefined, ttlMs: number, now?: () => number) {
    this.reads = source && new CachedReads(source, { ttlMs, what: 'push settings', ...(now ? { now } : {}) });
  }

  get(appId: string): PushSettings | undefined | Promise<PushSettings | undefined> {
    return this.reads?.get(appId);
  }

  /** Read again before the next use (a change here, or announced). */
  changed(appId: string): void {
    this.reads?.changed(appId);
  }
}
