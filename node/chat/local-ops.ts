import { ApiError } from '../../common/index.ts';
import { MENTION_WINDOW, threadLogId, type MemberRole, type NodeStore, type StoredMessage, type StoredPin } from '../store/index.ts';
import type { PinnedView } from './chat-pins.ts';
import { CHAT_LIMITS } from './limits.ts';
import type { ChatActor, SendInput, SendResult } from './actor.ts';
import type { ChatChange, EditInput } from './send-input.ts';
import type { ActorRegistry } from './registry.ts';
import { prepareReplay, type ReplayDelivery, type ReplayTarget, type ResumePoint } from './replay.ts';
import { chatView, memberView, messageView, reactionView, type ChatView, type MemberView, type MessageView, type ReactionView } from './views.ts';
import { reactionPage } from './reaction-summary.ts';
import { chatBanView, listRefusal, type ChatBanView, type ChatModeration, type Moderator, type MuteView } from './chat-moderation.ts';
import { flagView, type FlagView } from './flag-views.ts';
import { threadUnreadCount, type ThreadState } from './thread-follows.ts';

export interface Principal {
  appId: string;
  userId: string;
}

export interface ChatSummary extends ChatView {
  role: MemberRole;
  unreadCount: number;
  /** Unread messages that mention this member (see mentionCount). */
  mentionCount: number;
  /** Unread replies of the threads this member follows in the chat (see threadUnreadCount). */
  threadUnreadCount: number;
  readSeq: number;
  lastMessage?: MessageView;
  memberCount: number;
  /** Direct chats: the other member (its id here; ChatService adds its username and display name). */
  peer?: { userId: string; username?: string; displayName?: string };
}

export const PAGE = Object.freeze({ defaultSize: 50, maxSize: 100 });

/** A message of the chat's log whose seq is not published yet (a reply's seq is its place in its thread). */
const unpublished = (actor: ChatActor, m: StoredMessage) => m.chatId === actor.chatId && m.seq > actor.publishedSeq;

const notFound = () => new ApiError('CHAT_NOT_FOUND', 'no such chat, or you are not a member');

/**
 * The operations on one chat, run on the node that holds the chat's actor. Every argument and
 * result is plain JSON (or an ApiError), so a node that does not own the chat can forward the
 * call unchanged to the one that does (see ChatService).
 */
export class LocalChatOps {
  constructor(
    private readonly store: NodeStore,
    private readonly actors: ActorRegistry,
    /** Where replays for resuming sockets go (the realtime layer's). */
    private readonly deliverReplay: ReplayDelivery = () => {},
  ) {}

  /** Runs `run` on the actor of a chat the principal is a member of; CHAT_NOT_FOUND otherwise. */
  private async withActor<T>(p: Principal, chatId: string, run: (actor: ChatActor) => T | Promise<T>): Promise<T | ApiError> {
    const actor = await this.actors.get(p.appId, chatId);
    if (!actor || !actor.isMember(p.userId)) return notFound();
    return run(actor);
  }

  async send(p: Principal, chatId: string, input: SendInput): Promise<SendResult | ApiError> {
    return this.withActor(p, chatId, (actor) => actor.send(p.userId, input));
  }

  async edit(p: Principal, chatId: string, messageId: string, change: EditInput): Promise<MessageView | ApiError> {
    return this.withActor(p, chatId, (actor) => actor.edit(p.userId, messageId, change));
  }

  async deleteMessage(p: Principal, chatId: string, messageId: string): Promise<MessageView | ApiError> {
    return this.withActor(p, chatId, (actor) => actor.deleteMessage(p.userId, messageId));
  }

  async react(p: Principal, chatId: string, messageId: string, reaction: string, add: boolean): Promise<MessageView | ApiError> {
    return this.withActor(p, chatId, (actor) => actor.react(p.userId, messageId, reaction, add));
  }

  /** A page of a message's reactions, oldest first (reaction-summary.ts). */
  async reactions(p: Principal, chatId: string, messageId: string, query: { after?: string; limit: number; reaction?: string }): Promise<{ reactions: ReactionView[]; next?: string } | ApiError> {
    return this.withActor(p, chatId, async (actor) => {
      const m = await actor.messageOf(messageId);
      if (!m || unpublished(actor, m)) return new ApiError('MESSAGE_NOT_FOUND', 'no such message in this chat');
      const page = reactionPage(m, query);
      const reactions = page.reactions.map((r) => reactionView(m, r));
      return page.next === undefined ? { reactions } : { reactions, next: page.next };
    });
  }

  /** Pins or unpins a message (chat-pins.ts): the pin, or `null` for an unpin. */
  async pin(p: Principal, chatId: string, messageId: string, add: boolean): Promise<StoredPin | null | ApiError> {
    return this.withActor(p, chatId, (actor) => actor.pin(p.userId, messageId, add));
  }

  /** The chat's pins, the newest pin first, each with its message as it is now (and the one it quotes): at most two reads each, none for recent ones. */
  async pins(p: Principal, chatId: string): Promise<PinnedView[] | ApiError> {
    return this.withActor(p, chatId, async (actor) => {
      const pins = [...(actor.chat.pins ?? [])].reverse();
      const messages = await Promise.all(
        pins.map(async (pin) => {
          const m = await actor.messageOf(pin.messageId);
          return m && { m, replyTo: m.replyToId === undefined ? undefined : await actor.messageOf(m.replyToId) };
        }),
      );
      return pins.flatMap((pin, i) => {
        const found = messages[i];
        return found ? [{ ...pin, message: messageView(found.m, found.replyTo, p.userId) }] : [];
      });
    });
  }

  async markRead(p: Principal, chatId: string, seq: number): Promise<number | ApiError> {
    return this.withActor(p, chatId, (actor) => actor.markRead(p.userId, seq));
  }

  /** `null` when done: the result crosses nodes as JSON, which has no `undefined`. */
  async typing(p: Principal, chatId: string, started: boolean): Promise<ApiError | null> {
    return this.withActor(p, chatId, (actor) => (actor.typing(p.userId, started) ?? null));
  }

  /**
   * History, newest first: up to `size` messages older than `lastMessage` (the cursor is the id of
   * the oldest message of the previous page; absent or empty means "from the newest"). Marks the
   * newest returned message read (spec §4.2's side effect). Not a member or no chat: 400.
   */
  async history(p: Principal, chatId: string, size: number, lastMessage: string | undefined): Promise<MessageView[] | ApiError> {
    const actor = await this.actors.get(p.appId, chatId);
    if (!actor || !actor.isMember(p.userId)) return new ApiError('CHAT_NOT_ACCESSIBLE', 'the chat does not exist or you are not a member');
    if (lastMessage !== undefined && !(await this.store.messages.get(p.appId, chatId, lastMessage))) {
      return new ApiError('VALIDATION_FAILED', 'lastMessage names no message of this chat', { errors: [{ path: '/query/lastMessage', message: 'unknown message' }] });
    }
    // Only what the actor has published: a message still being written is not history yet. Those
    // are the newest, so when some were skipped the page is read again, larger, to stay full: a
    // short page means the start of the chat.
    let stored: StoredMessage[] = [];
    for (let extra = 0, attempt = 0; attempt < 3; attempt++) {
      const page = await this.store.messages.pageBackward(p.appId, chatId, lastMessage, size + extra);
      const published = actor.publishedSeq;
      stored = page.filter((m) => m.seq <= published).slice(0, size);
      if (stored.length === size || page.length < size + extra) break;
      extra = page.length - stored.length;
    }
    const replyIds = [...new Set(stored.map((m) => m.replyToId).filter((id): id is string => id !== undefined))];
    const replies = new Map((await Promise.all(replyIds.map((id) => this.store.messages.get(p.appId, chatId, id)))).filter((m) => m !== undefined).map((m) => [m.id, m]));
    const views = stored.map((m) => messageView(m, m.replyToId ? replies.get(m.replyToId) : undefined, p.userId));
    const newest = stored[0];
    if (newest) await actor.markRead(p.userId, newest.seq);
    return views;
  }

  /**
   * A page of a message's thread, newest first, with history's cursor rules: up to `size` replies
   * older than `lastReply`, or the newest when absent. O(result): the thread is a log of its own.
   */
  async thread(p: Principal, chatId: string, parentId: string, size: number, lastReply: string | undefined): Promise<MessageView[] | ApiError> {
    return this.withActor(p, chatId, async (actor) => {
      const parent = await actor.messageOf(parentId);
      if (!parent || parent.seq > actor.publishedSeq || parent.parentId !== undefined) return new ApiError('MESSAGE_NOT_FOUND', 'no such thread in this chat');
      const log = threadLogId(chatId, parentId);
      if (lastReply !== undefined && !(await this.store.messages.get(p.appId, log, lastReply))) {
        return new ApiError('VALIDATION_FAILED', 'lastReply names no reply of this thread', { errors: [{ path: '/query/lastReply', message: 'unknown reply' }] });
      }
      return (await this.store.messages.pageBackward(p.appId, log, lastReply, size)).map((m) => messageView(m, undefined, p.userId));
    });
  }

  /** The principal follows or unfollows a message's thread (README, "Threads"). */
  async followThread(p: Principal, chatId: string, parentId: string, following: boolean): Promise<ThreadState | ApiError> {
    return this.withActor(p, chatId, (actor) => actor.threads.follow(p.userId, parentId, following));
  }

  /** Raises the principal's read mark in a message's thread. */
  async markThreadRead(p: Principal, chatId: string, parentId: string, seq: number): Promise<ThreadState | ApiError> {
    return this.withActor(p, chatId, (actor) => actor.threads.markRead(p.userId, parentId, seq));
  }

  /** The principal's state in a message's thread. */
  async threadState(p: Principal, chatId: string, parentId: string): Promise<ThreadState | ApiError> {
    return this.withActor(p, chatId, (actor) => actor.threads.stateOf(p.userId, parentId));
  }

  /** Moves the live connections of a new chat's members into its topic and tells them. */
  async announce(appId: string, chatId: string, userIds: string[]): Promise<null> {
    (await this.actors.get(appId, chatId))?.announceMembers(userIds);
    return null;
  }

  async get(p: Principal, chatId: string): Promise<ChatSummary | ApiError> {
    return this.withActor(p, chatId, (actor) => summary(this.store, actor, p.userId));
  }

  async rename(p: Principal, chatId: string, change: ChatChange): Promise<ChatSummary | ApiError> {
    return this.withActor(p, chatId, async (actor) => {
      const result = await actor.rename(p.userId, change);
      return result instanceof ApiError ? result : summary(this.store, actor, p.userId);
    });
  }

  async remove(p: Principal, chatId: string): Promise<true | ApiError> {
    return this.withActor(p, chatId, async (actor) => {
      const result = await actor.deleteChat(p.userId);
      return result instanceof ApiError ? result : true;
    });
  }

  async members(p: Principal, chatId: string): Promise<MemberView[] | ApiError> {
    const rank = { owner: 0, admin: 1, member: 2 } as const;
    return this.withActor(p, chatId, (actor) => [...actor.members.values()].map(memberView).sort((a, b) => a.joinedAt.localeCompare(b.joinedAt) || rank[a.role] - rank[b.role] || a.userId.localeCompare(b.userId)));
  }

  async addMembers(p: Principal, chatId: string, userIds: string[], role: MemberRole): Promise<MemberView[] | ApiError> {
    return this.withActor(p, chatId, async (actor) => {
      const added = await actor.addMembers(p.userId, userIds, role);
      return added instanceof ApiError ? added : added.map(memberView);
    });
  }

  async removeMember(p: Principal, chatId: string, userId: string): Promise<true | ApiError> {
    return this.withActor(p, chatId, (actor) => actor.removeMember(p.userId, userId));
  }

  async setRole(p: Principal, chatId: string, userId: string, role: MemberRole): Promise<MemberView | ApiError> {
    return this.withActor(p, chatId, async (actor) => {
      const result = await actor.setRole(p.userId, userId, role);
      return result instanceof ApiError ? result : memberView(result);
    });
  }

  /**
   * Replays to a resuming socket (of this node or another) what its user missed in the chat, in
   * order with the chat's live events (see prepareReplay). A non-member's replay has no entry.
   */
  async replay(appId: string, chatId: string, userId: string, point: ResumePoint, to: ReplayTarget, limit: number): Promise<null> {
    const actor = await this.actors.get(appId, chatId);
    const finish = actor ? await prepareReplay(actor, userId, point, limit) : () => ({ frames: [], entry: null });
    this.deliverReplay(appId, chatId, to, finish());
    return null;
  }

  // ---- moderation (README, "Moderation") ---------------------------------------------------------

  /** Runs `run` on the chat's actor for a moderator: the backend sees every chat, a user only those it is in. */
  private async withModerated<T>(appId: string, chatId: string, by: Moderator, run: (actor: ChatActor) => T | Promise<T>): Promise<T | ApiError> {
    const actor = await this.actors.get(appId, chatId);
    if (!actor || (by.kind === 'user' && !actor.isMember(by.userId))) return notFound();
    return run(actor);
  }

  async moderate(appId: string, chatId: string, by: Moderator, change: ChatModeration): Promise<MuteView | ChatBanView | true | ApiError> {
    return this.withModerated(appId, chatId, by, (actor) => actor.moderate(by, change));
  }

  async chatMutes(appId: string, chatId: string, by: Moderator): Promise<MuteView[] | ApiError> {
    return this.withModerated(appId, chatId, by, (actor) => actor.mutes(by));
  }

  /** The chat's bans in force, by user id, a page at a time; for its moderators only. */
  async chatBans(appId: string, chatId: string, by: Moderator, now: string, after: string | undefined, size: number): Promise<{ bans: ChatBanView[]; nextCursor?: string } | ApiError> {
    return this.withModerated(appId, chatId, by, async (actor) => {
      const refused = listRefusal(actor.members, by);
      if (refused !== null) return refused ?? notFound();
      const bans = await this.store.moderation.chatBans(appId, chatId, now, after, size + 1);
      const page = bans.slice(0, size);
      return { bans: page.map(chatBanView), ...(bans.length > size ? { nextCursor: page.at(-1)!.userId } : {}) };
    });
  }

  /**
   * A member flags a message of the chat, once. When the message's open flags reach the
   * application's threshold, the message is hidden pending review (see ChatActor.moderateMessage).
   */
  async flag(p: Principal, chatId: string, messageId: string, reason: string, id: string, now: string): Promise<{ flag: FlagView; hidden: boolean } | ApiError> {
    return this.withActor(p, chatId, async (actor) => {
      const message = await actor.messageOf(messageId);
      if (!message || unpublished(actor, message)) return new ApiError('MESSAGE_NOT_FOUND', 'no such message in this chat');
      if (message.deletedAt) return new ApiError('MESSAGE_DELETED', 'a deleted message cannot be flagged');
      if (message.senderId === p.userId) return new ApiError('NOT_ALLOWED', 'you cannot flag your own message');
      const flag = { appId: p.appId, id, chatId, messageId, senderId: message.senderId, flaggedBy: p.userId, reason, createdAt: now };
      const { result, open } = await this.store.flags.flag(flag);
      if (result === 'exists') return new ApiError('ALREADY_FLAGGED', 'you flagged this message already');
      const threshold = await this.store.flags.hideThreshold(p.appId);
      const hide = threshold > 0 && open >= threshold && message.hiddenAt === undefined;
      if (hide) {
        const hidden = await actor.moderateMessage(messageId, 'hide');
        if (hidden instanceof ApiError) return hidden;
      }
      return { flag: flagView(flag), hidden: hide || message.hiddenAt !== undefined };
    });
  }

  /** A review's outcome on a flagged message: restored when it was hidden (dismiss), or deleted. */
  async review(appId: string, chatId: string, messageId: string, outcome: 'restore' | 'delete'): Promise<MessageView | ApiError> {
    const actor = await this.actors.get(appId, chatId);
    if (!actor) return new ApiError('CHAT_NOT_FOUND', 'the flagged message’s chat no longer exists');
    return actor.moderateMessage(messageId, outcome);
  }

  /** A deleted user leaves the chat: a direct chat is deleted, a group's ownership passes on. */
  async forget(appId: string, chatId: string, userId: string): Promise<null> {
    const actor = await this.actors.get(appId, chatId);
    if (!actor || !actor.isMember(userId)) return null;
    if (actor.chat.kind === 'direct') await actor.deleteChat(userId);
    else await actor.removeMember(userId, userId);
    return null;
  }
}

/**
 * How many of a member's unread messages mention it, among the chat's newest MENTION_WINDOW and at
 * most CHAT_LIMITS.mentionCount: one bounded read, and none when nothing is unread.
 */
export async function mentionCount(store: NodeStore, appId: string, chatId: string, userId: string, readSeq: number, lastSeq: number): Promise<number> {
  if (lastSeq <= readSeq) return 0;
  return (await store.messages.mentionsBetween(appId, chatId, userId, Math.max(readSeq, lastSeq - MENTION_WINDOW), lastSeq, CHAT_LIMITS.mentionCount)).length;
}

async function summary(store: NodeStore, actor: ChatActor, userId: string): Promise<ChatSummary> {
  const member = actor.members.get(userId)!;
  const last = actor.reads.lastMessage();
  const out: ChatSummary = {
    ...chatView(actor.chat),
    lastSeq: actor.publishedSeq,
    role: member.role,
    readSeq: member.readSeq,
    unreadCount: Math.max(0, actor.publishedSeq - member.readSeq),
    mentionCount: await mentionCount(store, actor.appId, actor.chatId, userId, member.readSeq, actor.publishedSeq),
    threadUnreadCount: await threadUnreadCount(store, actor.appId, actor.chatId, userId),
    memberCount: actor.members.size,
  };
  if (last) out.lastMessage = last;
  const peer = actor.chat.kind === 'direct' ? [...actor.members.keys()].find((id) => id !== userId) : undefined;
  if (peer) out.peer = { userId: peer };
  return out;
}

/** The summary of a chat whose actor is loaded here (exact), for chat lists. */
export const loadedSummary = summary;
