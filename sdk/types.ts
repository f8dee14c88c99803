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

export interface Message extends ReplyTo {
  seq: number;
  deleted: boolean;
  deletedAt?: string;
  replyTo?: ReplyTo;
  reactions: Reaction[];
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
}

export interface ChatSummary extends Chat {
  role: Role;
  readSeq: number;
  unreadCount: number;
  lastMessage?: Message;
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

/** One recorded moderation action. */
export interface ModerationAction {
  actionId: string;
  at: string;
  action: 'user.banned' | 'user.unbanned' | 'blocklist.updated';
  /** The user acted on (none for a blocklist change). */
  userId?: string;
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
  | { type: 'reaction.added'; chatId: string; seq: number; rev: number; reaction: Reaction }
  | { type: 'reaction.removed'; chatId: string; seq: number; rev: number; reaction: Reaction }
  | { type: 'typing.started'; chatId: string; userId: string }
  | { type: 'typing.stopped'; chatId: string; userId: string }
  | { type: 'read.updated'; chatId: string; userId: string; seq: number }
  | { type: 'membership.changed'; chatId: string; userId: string; change: 'added' | 'removed' | 'role'; role?: Role }
  | { type: 'chat.updated'; chatId: string; chat: Chat }
  | { type: 'chat.deleted'; chatId: string };

export type UserEvent = { type: 'presence.online'; userId: string } | { type: 'presence.offline'; userId: string };

/**
 * Raised by the client itself after a reconnect when more of a chat changed while away than the
 * server replays: reload the history you show for that chat.
 */
export type ClientEvent = { type: 'chat.stale'; chatId: string };

export type ServerEvent = ChatEvent | UserEvent | ClientEvent;
export type ServerEventType = ServerEvent['type'];
export type EventOf<T extends ServerEventType> = Extract<ServerEvent, { type: T }>;
