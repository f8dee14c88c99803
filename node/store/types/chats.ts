/**
 * Chats, their members and each user's activity index; the options every store write takes. What
 * every store interface promises: ../types.ts.
 */

import type { OutboxEvent } from './outbox.ts';

export type ChatKind = 'direct' | 'group';
export type MemberRole = 'owner' | 'admin' | 'member';

export interface Chat {
  appId: string;
  id: string;
  kind: ChatKind;
  /** Groups only; direct chats have none. */
  name?: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  /** Seq of the newest message (0 when empty). Written by the chat's actor only. */
  lastSeq: number;
  /** Time of the newest message, or of creation; what "most recent activity" sorts by. */
  lastActivityAt: string;
  /**
   * How many members the chat has, as its actor last wrote the row (after each membership change);
   * absent on rows written before it was kept.
   */
  memberCount?: number;
  /** The application's own data (README, "Custom data"), as given; absent when none. */
  data?: Record<string, unknown>;
  /** Pinned messages, oldest pin first (at most CHAT_LIMITS.pins); absent when none. Written by the chat's actor with the row. */
  pins?: StoredPin[];
}

/** A pinned message of a chat: which, by whom, when. */
export interface StoredPin {
  messageId: string;
  pinnedBy: string;
  pinnedAt: string;
}

export interface Member {
  appId: string;
  chatId: string;
  userId: string;
  role: MemberRole;
  joinedAt: string;
  /** Seq of the newest message this member has read; unread = chat.lastSeq - readSeq. */
  readSeq: number;
  /** A mute of this member (README, "Moderation"): in force while `until` is absent or ahead. */
  mute?: MemberMute;
}

/** A member muted in its chat: it still reads and receives, but cannot send, edit, react or type. */
export interface MemberMute {
  /** When it lifts by itself; none: until it is lifted. */
  until?: string;
  /** `apiKey:<keyId>` (the backend) or `user:<userId>` (a group's owner or admin). */
  by: string;
  at: string;
}

/**
 * The webhook events a change reports (see WebhookOutbox), made durable with it: in the change's
 * own transaction (embedded), or written before it with their check and confirmed once it applied,
 * before the call resolves (Cassandra, where the change's compare-and-set cannot share a batch with
 * the outbox's partition; see CassandraOutbox). So once a call resolves with its change applied,
 * its events will be delivered whatever happens next; a change that does not apply (its result
 * says so, or it throws) leaves none to deliver, except that after a crash midway an unconfirmed
 * event is delivered if its check finds the change landed.
 */
export interface EventOptions {
  events?: OutboxEvent[];
}

export interface WriteOptions extends EventOptions {
  /**
   * Asks a chat write to apply only while this store instance is the chat's writer (see
   * ChatWriters): it takes the chat when no writer holds it, and is refused with FencedError,
   * writing nothing, while another writer holds it or once another has taken it over. The membership
   * writes of a chat's actor are fenced, so a node that lost a chat can no longer change its
   * members.
   */
  fenced?: boolean;
}

export interface ChatStore {
  /** Creates the chat with its first members in one atomic write. */
  create(chat: Chat, members: Member[], options?: EventOptions): Promise<void>;
  /**
   * The direct chat of a pair, created if absent: atomic on the unordered pair, so two concurrent
   * creates for one pair return the same chat.
   */
  ensureDirect(chat: Chat, members: [Member, Member], options?: EventOptions): Promise<{ chat: Chat; created: boolean }>;
  get(appId: string, chatId: string): Promise<Chat | undefined>;
  update(chat: Chat, options?: WriteOptions): Promise<'updated' | 'not-found'>;
  /** Removes the chat, its members and its membership index entries; messages become unreachable. */
  delete(appId: string, chatId: string, options?: EventOptions): Promise<'deleted' | 'not-found'>;
  members(appId: string, chatId: string): Promise<Member[]>;
  member(appId: string, chatId: string, userId: string): Promise<Member | undefined>;
  /** Upsert; an existing member keeps its `joinedAt`, and its `readSeq` is never lowered. */
  putMember(member: Member, options?: WriteOptions): Promise<void>;
  removeMember(appId: string, chatId: string, userId: string, options?: WriteOptions): Promise<'removed' | 'not-found'>;
  /** Chat ids of a user's memberships (partition: app + user). */
  chatsOf(appId: string, userId: string): Promise<string[]>;
  /**
   * A user's chats by activity (partition: app + user), newest first, ties by chat id descending:
   * up to `limit` entries strictly after `after` in that order (from the start without it). Costs
   * O(limit) whatever the user's chat count. Each chat appears once, at the activity time its last
   * `writeActivity` (or the membership write that added the user) gave it.
   */
  chatsByActivity(appId: string, userId: string, after: ActivityPosition | undefined, limit: number): Promise<ActivityPosition[]>;
  /**
   * Writes a chat's row (as `update` does, not fenced) and moves the chat to `chat.lastActivityAt` in
   * the activity index of each of `userIds` that is a member (the chat's members as the caller
   * knows them; an id that is not a member is skipped, so a removal is never undone). 'not-found'
   * when the chat is gone, and nothing is written. `previousAt`: the time the caller's previous
   * call moved the chat to, which lets a store move entries without reading them first.
   */
  writeActivity(chat: Chat, userIds: string[], previousAt?: string): Promise<'updated' | 'not-found'>;
  /**
   * How many chats each user is a member of (0 for none). Kept as a count beside the index, so
   * reading it costs O(users) whatever the counts; see `recountChats` for stores whose count may
   * drift after a failed write.
   */
  chatCounts(appId: string, userIds: string[]): Promise<Map<string, number>>;
  /** Counts a user's chats from the membership index (O(its chats)) and stores that count. */
  recountChats(appId: string, userId: string): Promise<number>;
  /** Raises a member's read mark; never lowers it. Returns the mark now stored. */
  markRead(appId: string, chatId: string, userId: string, seq: number): Promise<number | undefined>;
  /**
   * Writes members' read marks as given, in one statement, without a compare-and-set: for the
   * chat's actor only, which moves a sender's mark to its own messages and calls this serialized
   * with its `markRead` and membership changes, passing marks no lower than stored. A user that is
   * not a member is not made one (reads never show it).
   */
  writeReadMarks(appId: string, chatId: string, marks: ReadonlyArray<{ userId: string; seq: number }>): Promise<void>;
}

/** A chat's place in a user's activity index. */
export interface ActivityPosition {
  at: string;
  chatId: string;
}
