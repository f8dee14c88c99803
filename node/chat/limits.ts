/** Limits of chats and messages; documented in the README's cluster section. */
export const CHAT_LIMITS = Object.freeze({
  /** Characters of a message's content. */
  messageChars: 4000,
  /** Files one message carries. */
  attachments: 10,
  /** Pinned messages of one chat. */
  pins: 50,
  /**
   * Threads one user keeps a row for (followed, or unfollowed explicitly): a new one past it
   * forgets the user's least recently active thread. Bounds the inbox's read.
   */
  threadFollows: 1000,
  /** Members one message mentions. */
  mentions: 25,
  /** The highest mention count a chat shows (a member's mentions among its unread messages). */
  mentionCount: 99,
  /** Characters of a reaction value (an emoji or a short name). */
  reactionChars: 32,
  /** Members of a group chat. */
  groupMembers: 1000,
  /** Distinct reaction values on one message. */
  reactionsPerMessage: 100,
  /** Reactions one user may leave on one message (of distinct values). */
  reactionsPerUser: 20,
  /** Reactions on one message in all (a message and its reactions are stored as one value). */
  reactionEntries: 500,
  /** Messages an actor keeps in memory for resume and replies. */
  recentMessages: 512,
  /**
   * Idempotency keys of its latest sends an actor keeps (send-keys.ts): a retry among them is
   * answered from memory; older keys are looked up in the store. At most 128 keys of up to 64
   * characters (with their sender's id): about 30 KB per busy chat.
   */
  recentKeys: 128,
  /** Messages read into memory when an actor starts (the rest load on demand). */
  preloadMessages: 64,
  /** Largest write batch an actor hands the store at once. */
  batchMessages: 256,
  /** Least time between two writes of a chat row's activity (last seq, last activity time). */
  activityWriteMs: 1000,
  /**
   * Least time between two moves of a busy chat in its members' lists (list-moves.ts; a quiet chat
   * still rises at its first message). Each move rewrites a row per member: at 1 s, the moves of 12
   * chats of 24 members took most of the replicated ring's CPU at any rate (bench/RESULTS.md,
   * cluster-ha), and on the embedded store those of 20 chats of 50 members took 12% of a node's
   * busy time at 600 msgs/s (a CPU profile of `npm run bench -- fanout --rate 600`).
   */
  listMoveMs: 10_000,
});
