/**
 * Bans, the moderation log, blocklists, user blocks and message flags. What every store interface
 * promises: ../types.ts.
 */

/** An application-wide ban of a chat user (README, "Moderation"). */
export interface UserBan {
  appId: string;
  userId: string;
  reason?: string;
  /** When it lifts by itself; none: until it is lifted. */
  expiresAt?: string;
  createdAt: string;
  /** Who banned: `apiKey:<keyId>` (the backend). */
  by: string;
}

export type ModerationActionKind =
  | 'user.banned'
  | 'user.unbanned'
  | 'blocklist.updated'
  | 'member.muted'
  | 'member.unmuted'
  | 'member.banned'
  | 'member.unbanned'
  | 'flag.dismissed'
  | 'flag.deleted'
  | 'flag.banned';

/** A user banned from one chat: removed from it, and not added again while the ban is in force. */
export interface ChatBan {
  appId: string;
  chatId: string;
  userId: string;
  reason?: string;
  expiresAt?: string;
  createdAt: string;
  /** `apiKey:<keyId>` or `user:<userId>`. */
  by: string;
}

/** One moderation action, as recorded (who, what, when, why). */
export interface ModerationAction {
  appId: string;
  /** A UUIDv7: actions list newest first by id. */
  id: string;
  at: string;
  action: ModerationActionKind;
  /** The user acted on (none for a blocklist change). */
  userId?: string;
  /** The chat of a chat mute or ban, or of a flagged message. */
  chatId?: string;
  /** The flagged message a review resolved. */
  messageId?: string;
  by: string;
  reason?: string;
  expiresAt?: string;
}

/**
 * Bans and the moderation actions log. A ban in force is one whose `expiresAt` is absent or after
 * `now`; an expired ban is as if lifted (stores may drop it). Each write records its action with
 * it (in one transaction embedded; on Cassandra the action first, so no ban exists unrecorded).
 */
export interface ModerationStore {
  /** Bans the user (replacing any ban it has) and records `action`. */
  ban(ban: UserBan, action: ModerationAction): Promise<void>;
  /** Lifts the user's ban in force and records `action`; 'not-banned' (nothing recorded) when there is none. */
  unban(appId: string, userId: string, action: ModerationAction, now: string): Promise<'unbanned' | 'not-banned'>;
  /** The user's ban in force at `now`, if any: one key read. */
  banOf(appId: string, userId: string, now: string): Promise<UserBan | undefined>;
  /** Bans in force at `now`, by user id, after `afterUserId`, at most `limit`. */
  bans(appId: string, now: string, afterUserId: string | undefined, limit: number): Promise<UserBan[]>;
  /** Recorded actions, newest first, older than `beforeId` (the newest without it), at most `limit`; kept 90 days. */
  actions(appId: string, beforeId: string | undefined, limit: number): Promise<ModerationAction[]>;
  /**
   * `userId` blocks `blockedId` (partition: the blocker): 'blocked', or 'exists' when it already
   * does (its time unchanged), or 'full' when it blocks `max` users already.
   */
  block(appId: string, userId: string, blockedId: string, at: string, max: number): Promise<'blocked' | 'exists' | 'full'>;
  unblock(appId: string, userId: string, blockedId: string): Promise<'unblocked' | 'not-blocked'>;
  /** Whom `userId` blocks, by user id, after `afterId`, at most `limit`. */
  blocks(appId: string, userId: string, afterId: string | undefined, limit: number): Promise<UserBlock[]>;
  /** `userId`'s block of `otherId`, if it blocks it: one key read. */
  blockOf(appId: string, userId: string, otherId: string): Promise<UserBlock | undefined>;
  /** The application's blocklist as last set (undefined: never set): one row. */
  blocklist(appId: string): Promise<StoredBlocklist | undefined>;
  /** Replaces the application's blocklist. */
  setBlocklist(appId: string, list: StoredBlocklist): Promise<void>;
  /** Records an action that is not a ban or unban (those record their own). */
  log(action: ModerationAction): Promise<void>;
  /** Bans the user from the chat (replacing any chat ban it has there) and records `action` (partition: the chat). */
  chatBan(ban: ChatBan, action: ModerationAction): Promise<void>;
  /** Lifts the user's chat ban in force and records `action`; 'not-banned' (nothing recorded) when there is none. */
  liftChatBan(appId: string, chatId: string, userId: string, action: ModerationAction, now: string): Promise<'lifted' | 'not-banned'>;
  /** The user's ban from the chat in force at `now`, if any: one key read. */
  chatBanOf(appId: string, chatId: string, userId: string, now: string): Promise<ChatBan | undefined>;
  /** The chat's bans in force at `now`, by user id, after `afterUserId`, at most `limit`. */
  chatBans(appId: string, chatId: string, now: string, afterUserId: string | undefined, limit: number): Promise<ChatBan[]>;
}

/** An application's blocklist: its entries and a version that changes with every set. */
export interface StoredBlocklist {
  entries: { text: string; action: 'block' | 'mask' }[];
  version: string;
  updatedAt: string;
}

/** A user blocking another (README, "Moderation"). */
export interface UserBlock {
  userId: string;
  blockedAt: string;
}

/** A member's flag on a message (README, "Moderation"), open until a review resolves it. */
export interface MessageFlag {
  appId: string;
  /** A UUIDv7: the review queue lists newest first by id. */
  id: string;
  chatId: string;
  messageId: string;
  /** The message's author, as the review's `ban` acts on. */
  senderId: string;
  flaggedBy: string;
  reason: string;
  createdAt: string;
}

/**
 * Flags and the review queue. A user flags a message once, ever: its flag stays counted against
 * another flag by it after a review resolved it. The queue holds open flags for 90 days (an
 * unreviewed flag expires then); a review resolves every open flag of one message at once.
 */
export interface FlagStore {
  /** 'exists' (nothing written) when `flaggedBy` flagged the message before; `open`: the message's open flags after. */
  flag(flag: MessageFlag): Promise<{ result: 'flagged' | 'exists'; open: number }>;
  /** Open flags, newest first, older than `beforeId` (the newest without it), at most `limit`. */
  open(appId: string, beforeId: string | undefined, limit: number): Promise<MessageFlag[]>;
  /** One open flag by id: one key read. */
  get(appId: string, flagId: string): Promise<MessageFlag | undefined>;
  /** Closes every open flag of the message, and `flagId` in any case; resolves with those it closed. */
  resolve(appId: string, chatId: string, messageId: string, flagId: string): Promise<MessageFlag[]>;
  /** How many distinct open flags hide a message pending review (0: never hidden). */
  hideThreshold(appId: string): Promise<number>;
  setHideThreshold(appId: string, threshold: number): Promise<void>;
}
