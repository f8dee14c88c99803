import Type, { type Static } from 'typebox';
import { MENTION_WINDOW, threadLogId, type NodeStore, type StoredMessage, type ThreadFollow } from '../store/index.ts';
import { CHAT_LIMITS } from './limits.ts';

const Uuid = Type.String({ format: 'uuid' });

/** What a user sees of one thread: whether it follows it, how far it read, what is unread. */
export const ThreadStateSchema = Type.Object({
  chatId: Uuid,
  parentId: Uuid,
  following: Type.Boolean({ description: 'Whether its replies count for you: unread counts, your threads inbox' }),
  readSeq: Type.Integer({ description: 'The newest reply you have read (its seq in the thread)' }),
  lastSeq: Type.Integer({ description: "The thread's newest reply" }),
  activityAt: Type.Optional(Type.String({ format: 'date-time', description: "Time of the thread's newest reply (of the parent, before any); absent when you never followed it" })),
  unreadCount: Type.Integer({ description: 'Replies after readSeq, while you follow; 0 otherwise' }),
  mentionCount: Type.Integer({ description: `Unread replies that mention you; at most ${CHAT_LIMITS.mentionCount}` }),
});
export type ThreadState = Static<typeof ThreadStateSchema>;

/** A user who never followed the thread: nothing to count. */
export const notFollowing = (chatId: string, parentId: string, lastSeq: number): ThreadState => ({ chatId, parentId, following: false, readSeq: 0, lastSeq, unreadCount: 0, mentionCount: 0 });

/**
 * Who follows a chat's threads (README, "Threads"), written by the chat's actor alone, in its
 * serial queue: the store compares nothing (see ThreadStore).
 *
 * Following: a reply makes its sender follow (again, even after an unfollow: it took part) with
 * its thread read up to its reply, and the members it mentions follow with that reply unread; the
 * parent's author follows at the first reply unless it has a row (an explicit unfollow stays).
 * Each follower's row then moves to the reply, which is what its unread count and inbox read.
 */
export class ThreadFollows {
  constructor(
    private readonly store: NodeStore,
    private readonly appId: string,
    private readonly chatId: string,
  ) {}

  /**
   * After `reply` was numbered in `parent`'s thread and before it is written: a crash between
   * leaves followers counting a reply that never came (a gap), never missing one that did.
   * Resolves with the thread's followers now (those its reply event goes to).
   */
  async replied(parent: StoredMessage, reply: StoredMessage, previousAt: string): Promise<string[]> {
    const { appId, chatId } = this;
    const at = reply.createdAt;
    const wanted = new Map<string, number>([[reply.senderId, reply.seq]]);
    for (const userId of reply.mentions ?? []) if (!wanted.has(userId)) wanted.set(userId, reply.seq - 1);
    const author = wanted.has(parent.senderId) ? [] : [parent.senderId];
    const users = [...wanted.keys(), ...author];
    // The thread's followers before this reply: the rows written below are the others.
    const [following, ...found] = await Promise.all([this.store.threads.followers(appId, chatId, parent.id), ...users.map((userId) => this.store.threads.get(appId, userId, chatId, parent.id))]);
    const rows: ThreadFollow[] = [];
    const starting: string[] = [];
    users.forEach((userId, i) => {
      const row = found[i];
      // The parent's author follows at the first reply unless it has a row (an explicit unfollow stays).
      if (!wanted.has(userId) && row) return;
      if (!row) starting.push(userId);
      const readSeq = wanted.get(userId) ?? reply.seq - 1;
      rows.push({ appId, userId, chatId, parentId: parent.id, following: true, readSeq: Math.max(readSeq, row?.readSeq ?? 0), lastSeq: reply.seq, activityAt: at });
    });
    await Promise.all(starting.map((userId) => this.makeRoom(userId)));
    await this.store.threads.put(rows);
    const written = new Set(rows.map((r) => r.userId));
    const others = following.filter((id) => !written.has(id));
    await this.store.threads.touch(appId, chatId, parent.id, others, reply.seq, at, previousAt);
    return [...rows.map((r) => r.userId), ...others];
  }

  /** Users who follow the thread now (one read of its followers' partition). */
  followers(parentId: string): Promise<string[]> {
    return this.store.threads.followers(this.appId, this.chatId, parentId);
  }

  /** The chat's threads `userId` follows (one read of its rows in the chat). */
  async followedBy(userId: string): Promise<Set<string>> {
    const rows = await this.store.threads.threadsOf(this.appId, userId, this.chatId);
    return new Set(rows.filter((r) => r.following).map((r) => r.parentId));
  }

  /** `userId` follows or unfollows the thread: its row, with nothing unread when it starts following. */
  async follow(userId: string, parent: StoredMessage, following: boolean): Promise<ThreadState> {
    const { appId, chatId } = this;
    const row = await this.store.threads.get(appId, userId, chatId, parent.id);
    const lastSeq = parent.thread?.lastSeq ?? 0;
    if (row?.following === following) return this.state(row);
    if (!row) await this.makeRoom(userId);
    // The thread's activity now: what every followed row of it carries (see ThreadStore).
    const next: ThreadFollow = { appId, userId, chatId, parentId: parent.id, following, readSeq: following ? lastSeq : (row?.readSeq ?? 0), lastSeq, activityAt: activityOf(parent) };
    await this.store.threads.put([next]);
    return this.state(next);
  }

  /** Raises `userId`'s read mark in the thread to `seq` (at most its newest reply); never lowers it. */
  async markRead(userId: string, parent: StoredMessage, seq: number): Promise<ThreadState> {
    const { appId, chatId } = this;
    const lastSeq = parent.thread?.lastSeq ?? 0;
    const row = await this.store.threads.get(appId, userId, chatId, parent.id);
    if (!row) return notFollowing(chatId, parent.id, lastSeq);
    const target = Math.min(seq, Math.max(lastSeq, row.lastSeq));
    if (target <= row.readSeq) return this.state(row);
    const next = { ...row, readSeq: target };
    await this.store.threads.put([next]);
    return this.state(next);
  }

  /** `userId` left the chat: its rows of the chat's threads go (its inbox and unread counts with them). */
  async forgetUser(userId: string): Promise<void> {
    const rows = await this.store.threads.threadsOf(this.appId, userId, this.chatId);
    await Promise.all(rows.map((row) => this.store.threads.forget(this.appId, userId, row.chatId, row.parentId)));
  }

  /** The user's state in the thread. */
  async stateOf(userId: string, parent: StoredMessage): Promise<ThreadState> {
    const row = await this.store.threads.get(this.appId, userId, this.chatId, parent.id);
    return row ? this.state(row) : notFollowing(this.chatId, parent.id, parent.thread?.lastSeq ?? 0);
  }

  private state(row: ThreadFollow): Promise<ThreadState> {
    return threadState(this.store, row);
  }

  /** Forgets `userId`'s least recently active thread when it has CHAT_LIMITS.threadFollows rows. */
  private async makeRoom(userId: string): Promise<void> {
    const rows = await this.store.threads.threadsOf(this.appId, userId);
    if (rows.length < CHAT_LIMITS.threadFollows) return;
    const oldest = rows.reduce((a, b) => (b.activityAt < a.activityAt ? b : a));
    await this.store.threads.forget(this.appId, userId, oldest.chatId, oldest.parentId);
  }
}

/** A row's state: its unread replies, and those among them that mention the user (bounded as a chat's). */
export async function threadState(store: NodeStore, row: ThreadFollow): Promise<ThreadState> {
  const unread = row.following ? Math.max(0, row.lastSeq - row.readSeq) : 0;
  const mentions = unread === 0 ? [] : await store.messages.mentionsBetween(row.appId, threadLogId(row.chatId, row.parentId), row.userId, Math.max(row.readSeq, row.lastSeq - MENTION_WINDOW), row.lastSeq, CHAT_LIMITS.mentionCount);
  return { chatId: row.chatId, parentId: row.parentId, following: row.following, readSeq: row.readSeq, lastSeq: row.lastSeq, activityAt: row.activityAt, unreadCount: unread, mentionCount: mentions.length };
}

/** A thread's activity: its newest reply's time, or its parent's before any reply. */
export const activityOf = (parent: StoredMessage): string => parent.thread?.lastReplyAt ?? parent.createdAt;

/** Unread replies of the threads `userId` follows in the chat: one read of its rows there. */
export async function threadUnreadCount(store: NodeStore, appId: string, chatId: string, userId: string): Promise<number> {
  let unread = 0;
  for (const row of await store.threads.threadsOf(appId, userId, chatId)) if (row.following) unread += Math.max(0, row.lastSeq - row.readSeq);
  return unread;
}
