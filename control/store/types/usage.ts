import type { UsageDelta, UsageSink } from '../../../common/usage/index.ts';

export type { UsageDelta };

export interface UsageSnapshot {
  users: number;
  chats: number;
  messages: number;
  /** Attachment bytes stored (files and thumbnails), as the nodes counted them. */
  fileBytes: number;
  /** Messages per day, for the days asked that have any. */
  messagesByDay: Record<string, number>;
  /** The highest concurrent-user sample per day, for the days asked that have any. */
  peakByDay: Record<string, number>;
  /** The newest concurrent-user sample, from any node. */
  current?: { users: number; at: string };
}

/**
 * Usage counters, written by every node (each flush adds its deltas: counters are sums across
 * nodes, peaks are maxima, the newest sample and the latest key use win) and read by the control
 * service. A flush is not idempotent: a retried one may count twice, which usage figures tolerate.
 */
export interface UsageStore extends UsageSink {
  /** Totals, and the per-day figures of `days` (any order). */
  read(appId: string, days: string[]): Promise<UsageSnapshot>;
  /** When each key of the application was last used, by key id (keys never used are absent). */
  keysLastUsed(appId: string): Promise<Record<string, string>>;
  /** Forgets the application's usage (it was deleted). */
  forget(appId: string): Promise<void>;
}
