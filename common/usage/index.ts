/**
 * Usage counts a node hands to the control store (see node/usage/meter.ts, which keeps them, and
 * control/store/types/usage.ts, which stores and reads them). Days are UTC, 'YYYY-MM-DD'.
 */

/** One node's counts for one application since its previous flush. */
export interface UsageDelta {
  appId: string;
  /** Net change of registered users (registrations minus deletions). */
  users: number;
  /** Net change of chats (created minus deleted). */
  chats: number;
  /** Messages made durable, per day. */
  messages: Record<string, number>;
  /** Net change of attachment bytes stored (finalized files and their thumbnails, less those deleted). */
  fileBytes?: number;
  /**
   * Users connected to the application at once, cluster-wide, as this node sampled them: the
   * highest sample per day, and the latest sample with its time.
   */
  concurrent?: { peaks: Record<string, number>; current: number; at: string };
  /** The latest use of each API key of the application this node saw (ISO time). */
  keysUsed: Record<string, string>;
}

/** Where a node's usage counts go: the control store's usage table. */
export interface UsageSink {
  /** Adds one node's deltas. `nodeId` names the writer (peaks are kept per node, read as the max). */
  record(nodeId: string, deltas: UsageDelta[]): Promise<void>;
}
