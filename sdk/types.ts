/**
 * Wire types of the cluster interface. They mirror the service's schemas; a type test
 * (test/sdk/types.test.ts) fails if the two ever disagree.
 */

export interface Reaction {
  reactionId: string;
  chatId: string;
  messageId: string;
  senderId: string;
  reaction: string;
  createdAt: string;
}

/** The replied-to message, flattened. */
export interface ReplyTo {
  chatId: string;
  timeStamp: string;
  messageId: string;
  senderId: string;
  content: string;
  edited: boolean;
  editedAt?: string;
}

/** A file a message carries: metadata only; `ChatClient.attachmentUrls` gives its signed URLs. */
export interface Attachment {
  id: string;
  name: string;
  size: number;
  /** Sniffed from the bytes by the service. */
  type: string;
  width?: number;
  height?: number;
  /** A ThumbHash (base64) to draw while the thumbnail loads. */
  placeholder?: string;
  thumbnail?: { width: number; height: number; type: 'image/webp' };
}

/** Signed URLs of an attachment, valid until `expiresAt` (5 minutes): ask again after. */
export interface AttachmentUrls {
  attachment: Attachment;
  url: string;
  thumbnailUrl?: string;
  expiresAt: string;
}

export interface Message extends ReplyTo {
  seq: number;
  deleted: boolean;
  deletedAt?: string;
  /** Hidden pending review (enough members flagged it): `content` is empty until a review restores it. */
  hidden?: true;
  replyTo?: ReplyTo;
  /** The latest 10 reactions, oldest first; all of them page from `ChatClient.reactions`. */
  reactions: Reaction[];
  /** How many reactions of each value, over all of them. */
  reactionCounts: Record<string, number>;
  /** The values you reacted with: in answers to you (history, your write's answer), never in events. */
  ownReactions?: string[];
  /** Files sent with it; absent when none, and on a deleted or hidden message. */
  attachments?: Attachment[];
  /** A reply: the message it answers (its `seq` is then its place in the thread). */
  parentId?: string;
  /** A reply shown in the chat's timeline too: the same message in both (its `seq` is its place in the list it was read from). */
  showInChat?: true;
  /** On a message with replies: its thread's summary. */
  thread?: ThreadSummary;
  /** The members it mentions; absent when none, and on a deleted message. */
  mentions?: string[];
  /** `system`: a notice your backend sent with its API key (members cannot send one). */
  type: 'regular' | 'system';
  /** Your application's own data, as sent; absent when none, and on a deleted or hidden message. */
  data?: Record<string, unknown>;
}

/** What a message with replies shows of its thread. */
export interface ThreadSummary {
  /** Replies sent (a deleted one stays as a tombstone and counts). */
  replyCount: number;
  lastReplyAt: string;
  /** The first five who replied, in that order. */
  participants: string[];
}

/** Your state in one thread (`ChatClient.threads.state`). */
export interface ThreadState {
  chatId: string;
  parentId: string;
  /** Whether its replies count for you: unread counts, your threads inbox. */
  following: boolean;
  /** The newest reply you have read (its seq in the thread). */
  readSeq: number;
  /** The thread's newest reply. */
  lastSeq: number;
  /** Time of the thread's newest reply (of the parent, before any); absent when you never followed it. */
  activityAt?: string;
  /** Replies after `readSeq`, while you follow; 0 otherwise. */
  unreadCount: number;
  /** Unread replies that mention you; at most 99. */
  mentionCount: number;
}

/** What a search names besides its words (README, "Search"). */
export interface SearchOptions {
  /** Only these chats (at most 100). */
  chatIds?: string[];
  senderId?: string;
  /** Only messages sent before / after these times (ISO 8601). */
  before?: string;
  after?: string;
  /** true: only replies in threads; false: no replies. */
  inThread?: boolean;
  hasAttachments?: boolean;
  /** 'newest' (default): newest first; 'relevance': the newest 200 hits, most relevant first. */
  order?: 'newest' | 'relevance';
  /** Hits a page, 1–50 (default 20). */
  size?: number;
  /** The previous page's `nextCursor`. */
  cursor?: string;
}

/** A message a search found, with where its words are in `message.content` ([start, end), UTF-16 units). */
export interface SearchHit {
  chatId: string;
  message: Message;
  matches: [number, number][];
}

/** A page of a search, newest first; it may hold fewer than `size` hits: go on while `nextCursor` is given. */
export interface SearchPage {
  hits: SearchHit[];
  nextCursor?: string;
}

/** A page of your threads inbox (`ChatClient.threads.inbox`). */
export interface ThreadInbox {
  /** Newest activity first, each with its parent message as it is now. */
  threads: (ThreadState & { parent: Message })[];
  /** Followed threads with unread replies, over the whole inbox. */
  unreadThreads: number;
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

/** A pinned message of a chat: which, by whom, when. */
export interface Pin {
  messageId: string;
  pinnedBy: string;
  pinnedAt: string;
}

/** A pin with its message as it is now (`ChatClient.pins`). */
export interface Pinned extends Pin {
  message: Message;
}

export type ChatType = 'direct' | 'group';
export type Role = 'owner' | 'admin' | 'member';

export interface Chat {
  chatId: string;
  type: ChatType;
  name?: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  lastSeq: number;
  lastActivityAt: string;
  /** Your application's own data, as set; absent when none. */
  data?: Record<string, unknown>;
}

export interface ChatSummary extends Chat {
  role: Role;
  readSeq: number;
  unreadCount: number;
  /** Unread messages that mention you, among the chat's newest 4,096; at most 99. */
  mentionCount: number;
  /** Unread replies of the threads you follow in the chat (apart from `unreadCount`). */
  threadUnreadCount: number;
  lastMessage?: Message;
  /** How many members the chat has. */
  memberCount: number;
  /** Direct chats: the other member. */
  peer?: { userId: string; username: string; displayName: string };
}

export interface Member {
  userId: string;
  role: Role;
  joinedAt: string;
  readSeq: number;
}

/** An application-wide ban (README, "Moderation"). */
export interface Ban {
  userId: string;
  reason?: string;
  /** When it lifts by itself; absent: until lifted. */
  expiresAt?: string;
  createdAt: string;
  /** `apiKey:<keyId>` */
  bannedBy: string;
}

/** A word or phrase of an application's blocklist, and what a match does. */
export interface BlocklistEntry {
  text: string;
  action: 'block' | 'mask';
}

/** A member muted in a chat: it reads and receives, but cannot send, edit, react or type (USER_MUTED). */
export interface Mute {
  chatId: string;
  userId: string;
  /** When it lifts by itself; absent: until lifted. */
  expiresAt?: string;
  /** `apiKey:<keyId>` or `user:<userId>` */
  mutedBy: string;
  mutedAt: string;
}

/** A user banned from a group: removed, and not added again (MEMBER_BANNED) until it lifts. */
export interface ChatBan {
  chatId: string;
  userId: string;
  reason?: string;
  expiresAt?: string;
  /** `apiKey:<keyId>` or `user:<userId>` */
  bannedBy: string;
  createdAt: string;
}

/** A member's flag on a message, open until the backend reviews it. */
export interface Flag {
  flagId: string;
  chatId: string;
  messageId: string;
  /** The flagged message's author. */
  senderId: string;
  flaggedBy: string;
  reason: string;
  createdAt: string;
}

/** An open flag in the review queue, with its message as stored (even while hidden). */
export interface QueuedFlag extends Flag {
  message?: { content: string; hidden: boolean; deleted: boolean };
}

/** One recorded moderation action. */
export interface ModerationAction {
  actionId: string;
  at: string;
  action: 'user.banned' | 'user.unbanned' | 'blocklist.updated' | 'member.muted' | 'member.unmuted' | 'member.banned' | 'member.unbanned' | 'flag.dismissed' | 'flag.deleted' | 'flag.banned';
  /** The user acted on (none for a blocklist change). */
  userId?: string;
  /** The chat of a chat mute or ban, or of a reviewed flag. */
  chatId?: string;
  /** The message of a reviewed flag. */
  messageId?: string;
  by: string;
  reason?: string;
  expiresAt?: string;
}

export interface User {
  userId: string;
  username: string;
  displayName: string;
  createdAt: string;
  updatedAt: string;
  /** Your application's own data, as set; absent when none. */
  data?: Record<string, unknown>;
}

/** What a backend's sign-in returns and hands to the browser (spec §1.4). */
export interface UserSession {
  jwt: string;
  refreshToken: string;
  userId: string;
  expiresIn?: number;
}

/** Events of a chat, delivered to its members. A discriminated union on `type`. */
export type ChatEvent =
  | { type: 'message.new'; chatId: string; seq: number; rev: number; message: Message; replay?: true }
  | { type: 'message.edited'; chatId: string; seq: number; rev: number; message: Message }
  | { type: 'message.deleted'; chatId: string; seq: number; rev: number; message: Message }
  /** After a reconnect: a message you had seen changed while you were away; `message` is its current state. */
  | { type: 'message.updated'; chatId: string; seq: number; rev: number; message: Message; replay: true }
  /** Enough members flagged the message: it is hidden pending review (`message.hidden`, no content). */
  | { type: 'message.hidden'; chatId: string; seq: number; rev: number; message: Message }
  /** A review dismissed the flags of a hidden message: it has its content again. */
  | { type: 'message.restored'; chatId: string; seq: number; rev: number; message: Message }
  | { type: 'reaction.added'; chatId: string; seq: number; rev: number; reaction: Reaction }
  | { type: 'reaction.removed'; chatId: string; seq: number; rev: number; reaction: Reaction }
  | { type: 'typing.started'; chatId: string; userId: string }
  | { type: 'typing.stopped'; chatId: string; userId: string }
  | { type: 'read.updated'; chatId: string; userId: string; seq: number }
  | { type: 'membership.changed'; chatId: string; userId: string; change: 'added' | 'removed' | 'role'; role?: Role }
  /** A member was muted (until `expiresAt`; absent: until unmuted). The lift at `expiresAt` is not announced. */
  | { type: 'member.muted'; chatId: string; userId: string; expiresAt?: string }
  | { type: 'member.unmuted'; chatId: string; userId: string }
  /** A user was banned from the chat; a member is removed next (`membership.changed`). */
  | { type: 'member.banned'; chatId: string; userId: string; expiresAt?: string }
  | { type: 'member.unbanned'; chatId: string; userId: string }
  | { type: 'chat.updated'; chatId: string; chat: Chat }
  /** A message's thread changed: its summary now (`seq` is the parent's). */
  | { type: 'thread.updated'; chatId: string; seq: number; rev: number; parentId: string; thread: ThreadSummary }
  /** A reply in a thread; `seq` is its place in the thread. */
  | { type: 'thread.reply'; chatId: string; parentId: string; seq: number; rev: number; message: Message; replay?: true }
  | { type: 'message.pinned'; chatId: string; pin: Pin }
  /** Without `unpinnedBy`: the message was deleted, which unpins it. */
  | { type: 'message.unpinned'; chatId: string; messageId: string; unpinnedBy?: string }
  | { type: 'chat.deleted'; chatId: string };

export type UserEvent =
  | { type: 'presence.online'; userId: string }
  | { type: 'presence.offline'; userId: string }
  /** You read a thread up to `seq` (on this or another connection). */
  | { type: 'thread.read'; chatId: string; parentId: string; seq: number };

/**
 * Raised by the client itself after a reconnect when more of a chat changed while away than the
 * server replays: reload the history you show for that chat.
 */
export type ClientEvent = { type: 'chat.stale'; chatId: string };

export type ServerEvent = ChatEvent | UserEvent | ClientEvent;
export type ServerEventType = ServerEvent['type'];
export type EventOf<T extends ServerEventType> = Extract<ServerEvent, { type: T }>;
