/**
 * Messages, the head that orders them, and the writer hold that fences a chat's writes. What every
 * store interface promises: ../types.ts.
 */

import type { OutboxEvent } from './outbox.ts';

export interface StoredReaction {
  reactionId: string;
  userId: string;
  reaction: string;
  createdAt: string;
}

/** A file a message carries (README, "Attachments"): its metadata, as finalize made it; the bytes are in the object store. */
export interface StoredAttachment {
  /** The upload's id: the file's key in the object store is made from it. */
  id: string;
  name: string;
  size: number;
  type: string;
  width?: number;
  height?: number;
  placeholder?: string;
  thumbnail?: { width: number; height: number; type: 'image/webp' };
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
  /** Files sent with the message (at most CHAT_LIMITS.attachments), kept on its tombstone so their deletion can find them. */
  attachments?: StoredAttachment[];
  /**
   * A reply: the message of its chat it answers (README, "Threads"). A reply is stored in its
   * thread's log (thread-log.ts): its `chatId` is that log's key and its `seq` its place there.
   */
  parentId?: string;
  /**
   * A reply also shown in the chat (`showInChat`) has two copies with its id, one in each log, and
   * each names the other's seq here: the chat's copy its place in the thread, the thread's copy
   * its place in the chat.
   */
  copySeq?: number;
  /** On a message that has replies: its thread's summary, rewritten with each reply's write. */
  thread?: ThreadSummary;
  /**
   * Members the message mentions (at most CHAT_LIMITS.mentions), indexed with it for their
   * mention counts (MessageStore.mentionsBetween); kept on its tombstone, whose write drops them
   * from that index.
   */
  mentions?: string[];
  /** Set only on a system message (sent with the API key); absent: a regular message. */
  type?: 'system';
  /** The application's own data (README, "Custom data"), as given; absent when none. */
  data?: Record<string, unknown>;
  /**
   * The chat's revision of this message's latest write (creation, edit, delete, reaction): one
   * counter per chat, assigned by its actor, so a reconnecting client can ask what changed after
   * the last revision it saw. Absent on messages written before revisions existed (read as 0).
   */
  rev?: number;
}

/** What a parent message knows of its thread. */
export interface ThreadSummary {
  /** The seq of its newest reply: replies are numbered 1, 2, 3… in their thread. */
  lastSeq: number;
  /** Replies sent (a deleted one stays as a tombstone and counts). */
  replyCount: number;
  lastReplyAt: string;
  /** The first five who replied, in that order. */
  participants: string[];
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
  /**
   * Makes definite every earlier write of the chat whose outcome was unknown (the store answered
   * OutcomeUnknownError): each such message is then stored for good, or will never appear. The
   * chat's writer calls it before it looks a message up by idempotency key, so a retry finds the
   * message if it landed and a new one is stored only if it did not. Takes the chat for this
   * instance where writing does (FencedError when another holds it). Nothing to do where writes
   * are never in doubt (the embedded store: a transaction commits or not).
   */
  settle(appId: string, chatId: string): Promise<void>;
}

/**
 * The seqs a mention count looks at, at most: the chat's newest MENTION_WINDOW messages. Bounds
 * the read (Cassandra: at most five partitions of 1,024 seqs) whatever a member has left unread.
 */
export const MENTION_WINDOW = 4096;

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
  /**
   * Several messages of one chat by id, in the order asked (undefined where none): on Cassandra
   * one read per partition the ids' seqs fall in (at most `ids.length`), not one per id.
   */
  getMany(appId: string, chatId: string, ids: readonly string[]): Promise<(StoredMessage | undefined)[]>;
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
   * The seq of the newest message stored and the newest revision stored (0 for none): where a
   * client told to page history stops, live delivery taking over after them. Unlike lastSeq and
   * lastRev, never numbers taken ahead by a writer (a node that does not hold the chat sees those).
   */
  newest(appId: string, chatId: string): Promise<ChatHead>;
  /**
   * Messages whose latest write has a revision > `afterRev`, in revision order, each once (in its
   * current state), up to `limit`. Costs O(result): only a message's latest revision is indexed.
   */
  changedSince(appId: string, chatId: string, afterRev: number, limit: number): Promise<StoredMessage[]>;
  /** The message a sender sent with an idempotency key, if any. */
  byClientKey(appId: string, chatId: string, senderId: string, clientKey: string): Promise<StoredMessage | undefined>;
  /**
   * The id of the message that carries an upload (`StoredMessage.attachments[].id`), if one was
   * stored: written by the put that stores the message, in the same write, so it names a stored
   * message or none. A tombstone keeps it. A reply's (a message of a thread's log) is held in its
   * chat's name: `chatId` is the chat's, for the messages of the chat and of its threads.
   */
  attachmentHolder(appId: string, chatId: string, uploadId: string): Promise<string | undefined>;
  /**
   * The seqs of stored messages in (afterSeq, upToSeq] that mention `userId`, newest first, at
   * most `limit`: what a member's mention count reads. Written by the put that stores a message
   * (in the same write); a tombstone's put drops its mentions. The caller keeps
   * `upToSeq - afterSeq` at most MENTION_WINDOW.
   */
  mentionsBetween(appId: string, chatId: string, userId: string, afterSeq: number, upToSeq: number, limit: number): Promise<number[]>;
}
