import type { SigningKeyStore } from '../../common/index.ts';

/**
 * The node's store interfaces. Every key starts with the application id (tenancy in every key);
 * every lookup takes it, so a resource of another application is simply not found. The layout is
 * wide-column: each method names the partition it reads, and every query costs O(result).
 */

export interface ChatUser {
  appId: string;
  id: string;
  /** Unique per application; the integrator's handle for the user. */
  username: string;
  displayName: string;
  createdAt: string;
  updatedAt: string;
}

export interface UserSessionFamily {
  appId: string;
  id: string;
  userId: string;
  expiresAt: string;
  revokedAt?: string;
}

export interface UserRefreshToken {
  appId: string;
  hash: string;
  familyId: string;
  userId: string;
  expiresAt: string;
  usedAt?: string;
}

export type UserRotateResult =
  | { kind: 'rotated'; userId: string; familyId: string }
  | { kind: 'reused'; familyId: string }
  | { kind: 'invalid' };

export interface UserStore {
  /** Atomic on (appId, username). `events` are written only with 'created' (see EventOptions). */
  create(user: ChatUser, options?: EventOptions): Promise<'created' | 'exists'>;
  get(appId: string, userId: string): Promise<ChatUser | undefined>;
  getByUsername(appId: string, username: string): Promise<ChatUser | undefined>;
  update(user: ChatUser): Promise<'updated' | 'not-found'>;
  /** Removes the user and frees the username; sessions are revoked by the caller. */
  delete(appId: string, userId: string, options?: EventOptions): Promise<'deleted' | 'not-found'>;
}

/** Chat users' refresh-token families, with the same rotation and reuse rules as dashboard sessions. */
export interface UserSessionStore {
  createFamily(family: UserSessionFamily, first: UserRefreshToken): Promise<void>;
  getFamily(appId: string, id: string): Promise<UserSessionFamily | undefined>;
  /**
   * Atomically: if `oldHash` is unused, unexpired and its family live, mark it used and store
   * `nextHash` in the same family with the same expiry ('rotated'); if it was already used, revoke
   * the family ('reused').
   */
  rotate(appId: string, oldHash: string, nextHash: string, now: string): Promise<UserRotateResult>;
  revokeAllForUser(appId: string, userId: string, now: string): Promise<void>;
  /**
   * Forgets families and tokens whose expiry is before `now` (an expired sign-in can never be used
   * again), so sign-ins cost storage only while they can be used. Stores that expire rows by
   * themselves (Cassandra TTLs) may do nothing here. Resolves with how many records were removed.
   */
  sweepExpired(now: string): Promise<number>;
}

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
 * Asks a chat write to apply only while this store instance is the chat's writer (see ChatWriters):
 * it takes the chat when no writer holds it, and is refused with FencedError, writing nothing,
 * while another writer holds it or once another has taken it over. The membership writes of a
 * chat's actor are fenced, so a node that lost a chat can no longer change its members.
 */
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

export interface StoredReaction {
  reactionId: string;
  userId: string;
  reaction: string;
  createdAt: string;
}

export interface StoredMessage {
  appId: string;
  chatId: string;
  /** UUIDv7: time-ordered, and ordered like `seq` within a chat (both assigned by the chat's actor). */
  id: string;
  seq: number;
  senderId: string;
  content: string;
  createdAt: string;
  editedAt?: string;
  /** Tombstone: content emptied, `deleted` set; the seq stays so history has no gaps. */
  deletedAt?: string;
  replyToId?: string;
  reactions: StoredReaction[];
  /** The sender's idempotency key, indexed with the message so a retry finds it. */
  clientKey?: string;
  /** Hidden pending review (enough members flagged it): shown without its content until a review restores or deletes it. */
  hiddenAt?: string;
  /**
   * The chat's revision of this message's latest write (creation, edit, delete, reaction): one
   * counter per chat, assigned by its actor, so a reconnecting client can ask what changed after
   * the last revision it saw. Absent on messages written before revisions existed (read as 0).
   */
  rev?: number;
}

/** A chat's head: the highest seq and revision its messages have taken. */
export interface ChatHead {
  seq: number;
  rev: number;
}

/** A fenced put applies only if the chat's stored head is `from`, and moves it to `to` atomically with the check. */
export interface HeadFence {
  from: ChatHead;
  to: ChatHead;
}

/** A store instance that writes chats: a node of the cluster, named by its id and the address its peers call it at. */
export interface WriterId {
  id: string;
  /** Where other nodes reach this one (its node-to-node address), when it has one. */
  address?: string;
}

/**
 * A fenced write was refused and wrote nothing: the chat's head was not `fence.from` (another
 * writer moved it), or another writer holds the chat (`holder`: forward the operation there).
 */
export class FencedError extends Error {
  readonly code = 'FENCED';
  constructor(
    readonly appId: string,
    readonly chatId: string,
    readonly found: ChatHead,
    readonly holder?: WriterId,
  ) {
    super(holder ? `chat ${chatId} is written by ${holder.id}` : `chat ${chatId} moved on to seq ${found.seq}, rev ${found.rev}: another writer owns it`);
  }
}

/**
 * Which store instance writes each chat. Fenced writes (MessageStore.put with a fence, ChatStore
 * writes with `fenced`) take the chat for their instance when no writer holds it, and are refused
 * with FencedError naming the holder while another instance holds it. An instance holds a chat from
 * its first fenced write until it releases it, or until it has written nothing for the store's hold
 * time (a crashed node's chats are free again after that). Fenced writes of one instance are
 * serialized by the head they name, as before: of two puts from the same head exactly one applies.
 */
export interface ChatWriters {
  /** This instance, as FencedError names it to the others (a random id until announced). */
  readonly self: WriterId;
  /**
   * Names this instance (its node id, and the node-to-node address where others forward what it
   * holds). Call it before this instance writes: holds already taken keep the name they had.
   */
  announce(self: WriterId): void;
  /**
   * Ends this instance's hold on the chat once its fenced writes in flight have settled, so another
   * instance's fenced write applies at once rather than after the hold times out. Idempotent;
   * a later fenced write of this instance takes the chat again (if it is still free).
   */
  release(appId: string, chatId: string): Promise<void>;
}

/** Messages are bucketed by UTC day of their id's timestamp. */
export const BUCKET_MS = 24 * 3600 * 1000;

/**
 * A chat's messages: history pages from newest to oldest by message id, resumption by seq, and
 * replay of changes by revision, each in O(result). The layout is the implementation's (the
 * embedded store buckets by time, Cassandra partitions by seq range); see each one.
 */
export interface MessageStore {
  /**
   * Writes messages (new or changed) durably; resolves only when they are on disk. Idempotent:
   * writing the same message twice leaves one copy.
   *
   * Without a fence, the messages are written as given, whatever the chat's head. With one, all
   * the messages belong to one chat (the caller's guarantee; a put naming several is refused with
   * a plain Error), and the put applies only if the chat's head is `fence.from`, moving it to
   * `fence.to` atomically with that check: of two writers holding the same head, exactly one goes
   * on. Otherwise it rejects with FencedError and writes nothing. A fenced put also takes the chat
   * for this store instance, or is refused while another instance holds it (see ChatWriters). A
   * fenced put that fails after the check may leave the head moved and some of its messages
   * unwritten: their numbers stay taken. A message whose seq is greater than `fence.from.seq` is
   * new: the caller guarantees it was never written before.
   *
   * `events` (webhook events of these writes, see WebhookOutbox) are made durable with the
   * messages: in the same transaction (embedded), or before the messages, so that once the put
   * resolves they are in the outbox whatever happens next (Cassandra; a recovery checks that the
   * change they describe was written, see OutboxEvent.check).
   */
  put(messages: StoredMessage[], fence?: HeadFence, events?: OutboxEvent[]): Promise<void>;
  get(appId: string, chatId: string, messageId: string): Promise<StoredMessage | undefined>;
  /** Up to `limit` messages older than `beforeId` (newest first), or the newest when absent. */
  pageBackward(appId: string, chatId: string, beforeId: string | undefined, limit: number): Promise<StoredMessage[]>;
  /** Messages with seq > `afterSeq`, oldest first, up to `limit`. */
  afterSeq(appId: string, chatId: string, afterSeq: number, limit: number): Promise<StoredMessage[]>;
  /**
   * The head's seq: the highest seq the chat's messages have taken (0 for none), counting those of
   * a fenced put whose messages were not all written; how an actor resumes numbering.
   */
  lastSeq(appId: string, chatId: string): Promise<number>;
  /** The head's revision: the highest the chat's messages have taken (0 for none), as for lastSeq. */
  lastRev(appId: string, chatId: string): Promise<number>;
  /**
   * Messages whose latest write has a revision > `afterRev`, in revision order, each once (in its
   * current state), up to `limit`. Costs O(result): only a message's latest revision is indexed.
   */
  changedSince(appId: string, chatId: string, afterRev: number, limit: number): Promise<StoredMessage[]>;
  /** The message a sender sent with an idempotency key, if any. */
  byClientKey(appId: string, chatId: string, senderId: string, clientKey: string): Promise<StoredMessage | undefined>;
}

/** Keys that sign user JWTs and make the cluster key; shared by every node of the cluster (contract in common/jwt/key-ring.ts). */
export type NodeSigningKeyStore = SigningKeyStore;

/**
 * A webhook event in the outbox of the node that made it (its `owner`): the delivery body is made
 * once, when the change is written, so a retry days later sends the same bytes.
 */
export interface OutboxEvent {
  /** `evt_…`: ordered by creation within its owner; the `webhook-id` every retry carries. */
  id: string;
  appId: string;
  type: string;
  /** The delivery body, `{type, id, timestamp, appId, data}`, as sent. */
  body: string;
  /**
   * For an event written before its change (see MessageStore.put, EventOptions): the change it
   * reports. A recovery sends an event still carrying one only if `changeLanded` finds the change.
   */
  check?: ChangeCheck;
}

/**
 * What a recovery looks for before sending an event written ahead of its change (see
 * changeLanded): a message at this revision or later (message events; the only kind of check
 * without a `kind`, as events written before the other kinds existed carry it); a chat, member
 * or user present or absent (a chat also updated at `updatedAt` or later; a user also holding
 * `username`, which a create claims after writing the user's row).
 */
export type ChangeCheck =
  | { kind?: undefined; chatId: string; messageId: string; rev: number }
  | { kind: 'chat'; chatId: string; present: boolean; updatedAt?: string }
  | { kind: 'member'; chatId: string; userId: string; present: boolean }
  | { kind: 'user'; userId: string; present: boolean; username?: string };

/** An outbox event not yet finished, with the endpoints that are done with it. */
export interface PendingEvent {
  event: OutboxEvent;
  done: string[];
}

/**
 * Each node's outbox of webhook events. An owner appends events with the change they report (see
 * EventOptions and MessageStore.put; presence events, which report no stored change, on their
 * own) and its dispatcher finishes them; when the owner
 * dies, another node adopts its outbox and finishes what is left. Delivery is at least once: an
 * event is finished only after every endpoint is done with it, so a crash at any point resends.
 */
export interface WebhookOutbox {
  /** Makes events durable in `owner`'s outbox. */
  append(owner: string, events: OutboxEvent[]): Promise<void>;
  /**
   * Unfinished events of `owner` with id ≥ `from` (from the owner's low-water mark without it),
   * oldest first, at most `limit`.
   */
  pending(owner: string, from: string | undefined, limit: number): Promise<PendingEvent[]>;
  /**
   * Records progress: `finished` events are not returned again; `partial` ones keep their done
   * endpoints; `low`, when given, says every event of the owner with a smaller id is finished. A
   * store may skip recording events (finished or partial) a few seconds above `low` at most,
   * which the next `low` covers: they may come back once after a crash (delivery is at least once).
   */
  progress(owner: string, finished: string[], partial: PendingEvent[], low?: string): Promise<void>;
  /**
   * The changes of these events (appended with a check, before them) applied: they are sent
   * without checking from now on. Ids not in the outbox (or carrying no check) are ignored.
   */
  confirm(owner: string, ids: string[]): Promise<void>;
  /** Owners whose outbox may hold unfinished events. */
  owners(): Promise<string[]>;
  /** Forgets an owner whose outbox is finished and who will append no more (a node gone for good). */
  retire(owner: string): Promise<void>;
}

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
  writers: ChatWriters;
  signingKeys: NodeSigningKeyStore;
  close(): Promise<void>;
}
