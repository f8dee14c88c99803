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

/**
 * Thread follows. Each user's rows form one partition (app + user), ordered by chat then parent and
 * bounded by THREAD_LIMITS.follows, which the caller keeps (`count` then `forget`); each thread's
 * followers another (app + chat + parent), bounded by the chat's members. A thread's rows are
 * written by its chat's actor alone, one write at a time, so none of these writes compares and sets.
 */
export interface ThreadStore {
  /** The user's row for the thread, if any: one key read. */
  get(appId: string, userId: string, chatId: string, parentId: string): Promise<ThreadFollow | undefined>;
  /** Writes rows as given (both partitions), in one batch. */
  put(rows: ThreadFollow[]): Promise<void>;
  /**
   * Moves the thread's newest reply to `lastSeq` at `at` in the rows of these users that exist
   * (an id without a row is skipped), never lowering `lastSeq`.
   */
  touch(appId: string, chatId: string, parentId: string, userIds: string[], lastSeq: number, at: string): Promise<void>;
  /** Users whose row for the thread says `following` (partition: the thread). */
  followers(appId: string, chatId: string, parentId: string): Promise<string[]>;
  /** The user's rows, of one chat or of all (partition: app + user), ordered by chat then parent. */
  threadsOf(appId: string, userId: string, chatId?: string): Promise<ThreadFollow[]>;
  /** Removes the user's row for the thread (both partitions); nothing when absent. */
  forget(appId: string, userId: string, chatId: string, parentId: string): Promise<void>;
}
