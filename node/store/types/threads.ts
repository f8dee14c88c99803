/**
 * Who follows which thread, and how far each follower has read it (README, "Threads"). What every
 * store interface promises: ../types.ts.
 */

/** A user's place in one thread: its row in the user's threads (the inbox's source). */
export interface ThreadFollow {
  appId: string;
  userId: string;
  chatId: string;
  /** The thread's parent message. */
  parentId: string;
  /**
   * Whether the thread's replies count for the user (its inbox, its unread counts). An explicit
   * unfollow keeps the row with `false`, so an automatic follow of the parent's author does not undo it.
   */
  following: boolean;
  /** Seq (in the thread) of the newest reply the user has read; never lowered. */
  readSeq: number;
  /** Seq of the thread's newest reply as last written to this row; never lowered. */
  lastSeq: number;
  /** Time of that reply: what the inbox sorts by. */
  activityAt: string;
}

/** A thread's place in a user's inbox: its activity time, then its chat and parent. */
export interface InboxPosition {
  activityAt: string;
  chatId: string;
  parentId: string;
}

/**
 * Thread follows. Each user's rows form one partition (app + user), ordered by chat then parent and
 * bounded by CHAT_LIMITS.threadFollows, which the caller keeps (`threadsOf` then `forget`); each
 * thread's followers another (app + chat + parent), bounded by the chat's members. Beside the
 * rows, two per-user indexes the inbox reads in O(page): the followed threads by activity, newest
 * first, and the followed threads with unread replies. A thread's rows are written by its chat's
 * actor alone, one write at a time, so none of these writes compares and sets.
 *
 * Every followed row of a thread carries the thread's activity (its newest reply's time, or its
 * parent's before any reply): `touch` moves the index entries from the time it is told was the
 * thread's previous one. An entry whose row says another time or no longer follows (left by a
 * write that failed half-way) is stale: `byActivity` returns it, and readers check it against
 * the row.
 */
export interface ThreadStore {
  /** The user's row for the thread, if any: one key read. */
  get(appId: string, userId: string, chatId: string, parentId: string): Promise<ThreadFollow | undefined>;
  /** The user's rows for these threads, in the order asked (undefined where none): one read of its partition. */
  getMany(appId: string, userId: string, keys: readonly { chatId: string; parentId: string }[]): Promise<(ThreadFollow | undefined)[]>;
  /** Writes rows as given (both partitions and both indexes; the row each replaces is read first). */
  put(rows: ThreadFollow[]): Promise<void>;
  /**
   * Moves the thread's newest reply to `lastSeq` at `at` in the rows of these followers (an id
   * without a row is skipped), never lowering `lastSeq`, with their index entries: from
   * `previousAt` (the thread's activity before) to `at`, and into the unread set.
   */
  touch(appId: string, chatId: string, parentId: string, userIds: string[], lastSeq: number, at: string, previousAt: string): Promise<void>;
  /** Users whose row for the thread says `following` (partition: the thread). */
  followers(appId: string, chatId: string, parentId: string): Promise<string[]>;
  /** The user's rows, of one chat or of all (partition: app + user), ordered by chat then parent. */
  threadsOf(appId: string, userId: string, chatId?: string): Promise<ThreadFollow[]>;
  /** Removes the user's row for the thread (both partitions, both indexes); nothing when absent. */
  forget(appId: string, userId: string, chatId: string, parentId: string): Promise<void>;
  /** The user's followed threads by activity, newest first (ties: chat, then parent, descending), after `after`: O(limit). */
  byActivity(appId: string, userId: string, after: InboxPosition | undefined, limit: number): Promise<InboxPosition[]>;
  /** The user's followed threads with unread replies (partition: app + user), by chat then parent. */
  unread(appId: string, userId: string): Promise<{ chatId: string; parentId: string }[]>;
}
