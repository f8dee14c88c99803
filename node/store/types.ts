import type { SigningKeyStore } from '../../common/index.ts';
import type { ChatStore } from './types/chats.ts';
import type { ChatWriters, MessageStore } from './types/messages.ts';
import type { FlagStore, ModerationStore } from './types/moderation.ts';
import type { WebhookOutbox } from './types/outbox.ts';
import type { PushDeviceStore } from './types/push.ts';
import type { SearchIndex } from './types/search.ts';
import type { ThreadStore } from './types/threads.ts';
import type { UserSessionStore, UserStore } from './types/users.ts';

/**
 * The node's store interfaces, one file per kind of data under types/. Every key starts with the
 * application id (tenancy in every key); every lookup takes it, so a resource of another
 * application is simply not found. The layout is wide-column: each method names the partition it
 * reads, and every query costs O(result).
 */

export type * from './types/users.ts';
export type * from './types/chats.ts';
export type * from './types/messages.ts';
export type * from './types/outbox.ts';
export type * from './types/moderation.ts';
export type * from './types/threads.ts';
export type * from './types/search.ts';
export type * from './types/push.ts';
export { addressIdentity } from './types/push.ts';
export { BUCKET_MS, FencedError, MENTION_WINDOW } from './types/messages.ts';

/** Keys that sign user JWTs and make the cluster key; shared by every node of the cluster (contract in common/jwt/key-ring.ts). */
export type NodeSigningKeyStore = SigningKeyStore;

/** How a node store is opened (besides where). */
export interface NodeStoreOptions {
  /** Index messages' text for search (SEARCH_INDEX): true by default. */
  searchIndex?: boolean;
}

/**
 * What the embedded store's writes have cost since it opened: the figures that tell how close its
 * single writer is to the disk's limit (every transaction is synced before it resolves).
 */
export interface StoreWriteStats {
  /** Write transactions committed, each synced to disk before its writes resolve. */
  transactions: number;
  /** Database pages written (4 KiB each): every page a commit changed, branches included. */
  pagesWritten: number;
  /** Seconds from each write transaction's start to the end of its commit, its sync to disk included. */
  transactionSeconds: number;
}

export interface NodeStore {
  users: UserStore;
  /** Flags and the review queue (see FlagStore). */
  flags: FlagStore;
  /** Bans and the moderation log (see ModerationStore). */
  moderation: ModerationStore;
  /** Webhook events on their way out (see WebhookOutbox). */
  outbox: WebhookOutbox;
  userSessions: UserSessionStore;
  chats: ChatStore;
  messages: MessageStore;
  /** Thread follows and their read marks (see ThreadStore). */
  threads: ThreadStore;
  /** The message search index, written by `messages.put` (see SearchIndex). */
  search: SearchIndex;
  /** Users' push devices (see PushDeviceStore). */
  push: PushDeviceStore;
  writers: ChatWriters;
  signingKeys: NodeSigningKeyStore;
  /** The embedded store's write counters; undefined on Cassandra, whose own tools count its work (nodetool, system_views). */
  writeStats(): StoreWriteStats | undefined;
  close(): Promise<void>;
}
