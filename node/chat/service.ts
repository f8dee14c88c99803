import { randomUUID } from 'node:crypto';
import { ApiError } from '../../common/index.ts';
import type { Chat, Member, MemberRole, NodeStore, StoredMessage } from '../store/index.ts';
import type { ChatActor, SendInput, SendResult } from './actor.ts';
import type { ActorRegistry } from './registry.ts';
import { chatView, memberView, messageView, type ChatView, type MemberView, type MessageView } from './views.ts';

export interface Principal {
  appId: string;
  userId: string;
}

export interface ChatSummary extends ChatView {
  role: MemberRole;
  unreadCount: number;
  readSeq: number;
  lastMessage?: MessageView;
}

export const PAGE = Object.freeze({ defaultSize: 50, maxSize: 100 });
export const CHAT_LIST = Object.freeze({ defaultSize: 20, maxSize: 100 });

const notFound = () => new ApiError('CHAT_NOT_FOUND', 'no such chat, or you are not a member');

/**
 * The chat operations both transports (REST and WebSocket) call. Everything that changes a chat
 * goes through the chat's actor; reads that need no ordering go to the store directly.
 */
export class ChatService {
  constructor(
    private readonly store: NodeStore,
    private readonly actors: ActorRegistry,
    private readonly now: () => Date,
  ) {}

  /** The actor of a chat the principal is a member of, else CHAT_NOT_FOUND. */
  async actorFor(p: Principal, chatId: string): Promise<ChatActor | ApiError> {
    const actor = await this.actors.get(p.appId, chatId);
    if (!actor || !actor.isMember(p.userId)) return notFound();
    return actor;
  }

  async send(p: Principal, chatId: string, input: SendInput): Promise<SendResult | ApiError> {
    const actor = await this.actorFor(p, chatId);
    return actor instanceof ApiError ? actor : actor.send(p.userId, input);
  }

  async edit(p: Principal, chatId: string, messageId: string, content: string): Promise<MessageView | ApiError> {
    const actor = await this.actorFor(p, chatId);
    return actor instanceof ApiError ? actor : actor.edit(p.userId, messageId, content);
  }

  async deleteMessage(p: Principal, chatId: string, messageId: string): Promise<MessageView | ApiError> {
    const actor = await this.actorFor(p, chatId);
    return actor instanceof ApiError ? actor : actor.delete(p.userId, messageId);
  }

  async react(p: Principal, chatId: string, messageId: string, reaction: string, add: boolean): Promise<MessageView | ApiError> {
    const actor = await this.actorFor(p, chatId);
    return actor instanceof ApiError ? actor : actor.react(p.userId, messageId, reaction, add);
  }

  async markRead(p: Principal, chatId: string, seq: number): Promise<number | ApiError> {
    const actor = await this.actorFor(p, chatId);
    return actor instanceof ApiError ? actor : actor.markRead(p.userId, seq);
  }

  async typing(p: Principal, chatId: string, started: boolean): Promise<ApiError | undefined> {
    const actor = await this.actorFor(p, chatId);
    return actor instanceof ApiError ? actor : actor.typing(p.userId, started);
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
    const views = stored.map((m) => messageView(m, m.replyToId ? replies.get(m.replyToId) : undefined));
    const newest = stored[0];
    if (newest) await actor.markRead(p.userId, newest.seq);
    return views;
  }

  // ---- chats ------------------------------------------------------------------------------------

  async createDirect(p: Principal, otherId: string): Promise<{ chat: Chat; created: boolean } | ApiError> {
    if (otherId === p.userId) return new ApiError('VALIDATION_FAILED', 'a direct chat needs another user', { errors: [{ path: '/body/userId', message: 'is yourself' }] });
    if (!(await this.store.users.get(p.appId, p.userId))) return new ApiError('USER_NOT_FOUND', 'your user no longer exists');
    if (!(await this.store.users.get(p.appId, otherId))) return new ApiError('USER_NOT_FOUND', `no user ${otherId} in this application`);
    const now = this.now().toISOString();
    const chat: Chat = { appId: p.appId, id: randomUUID(), kind: 'direct', createdBy: p.userId, createdAt: now, updatedAt: now, lastSeq: 0, lastActivityAt: now };
    const member = (userId: string): Member => ({ appId: p.appId, chatId: chat.id, userId, role: 'member', joinedAt: now, readSeq: 0 });
    const result = await this.store.chats.ensureDirect(chat, [member(p.userId), member(otherId)]);
    if (result.created) await this.announceNewChat(result.chat, [p.userId, otherId]);
    return result;
  }

  async createGroup(p: Principal, name: string, memberIds: string[]): Promise<Chat | ApiError> {
    const others = [...new Set(memberIds)].filter((id) => id !== p.userId);
    if (!(await this.store.users.get(p.appId, p.userId))) return new ApiError('USER_NOT_FOUND', 'your user no longer exists');
    for (const id of others) if (!(await this.store.users.get(p.appId, id))) return new ApiError('USER_NOT_FOUND', `no user ${id} in this application`);
    const now = this.now().toISOString();
    const chat: Chat = { appId: p.appId, id: randomUUID(), kind: 'group', name, createdBy: p.userId, createdAt: now, updatedAt: now, lastSeq: 0, lastActivityAt: now };
    const members: Member[] = [p.userId, ...others].map((userId) => ({ appId: p.appId, chatId: chat.id, userId, role: userId === p.userId ? 'owner' : 'member', joinedAt: now, readSeq: 0 }));
    await this.store.chats.create(chat, members);
    await this.announceNewChat(chat, members.map((m) => m.userId));
    return chat;
  }

  private announceNewChat(chat: Chat, userIds: string[]): Promise<unknown> {
    // Loading the actor subscribes nobody; the sink moves live connections into the chat's topic.
    return this.actors.get(chat.appId, chat.id).then((actor) => actor?.announceMembers(userIds));
  }

  async get(p: Principal, chatId: string): Promise<ChatSummary | ApiError> {
    const actor = await this.actorFor(p, chatId);
    if (actor instanceof ApiError) return actor;
    return this.summary(actor, p.userId);
  }

  private async summary(actor: ChatActor, userId: string): Promise<ChatSummary> {
    const member = actor.members.get(userId)!;
    const last = actor.lastMessage();
    const summary: ChatSummary = {
      ...chatView(actor.chat),
      lastSeq: actor.publishedSeq,
      role: member.role,
      readSeq: member.readSeq,
      unreadCount: Math.max(0, actor.publishedSeq - member.readSeq),
    };
    if (last) summary.lastMessage = last;
    return summary;
  }

  /**
   * My chats, most recent activity first, cursor-paged. The cursor is opaque (the position after the
   * last returned chat); the order is by (lastActivityAt desc, chatId).
   */
  async list(p: Principal, size: number, cursor: string | undefined): Promise<{ chats: ChatSummary[]; nextCursor?: string } | ApiError> {
    let after: { at: string; id: string } | undefined;
    if (cursor) {
      try {
        const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
        if (typeof at !== 'string' || typeof id !== 'string') throw new Error('shape');
        after = { at, id };
      } catch {
        return new ApiError('VALIDATION_FAILED', 'cursor is not one this service issued', { errors: [{ path: '/query/cursor', message: 'invalid' }] });
      }
    }
    const ids = await this.store.chats.chatsOf(p.appId, p.userId);
    const rows = (await Promise.all(ids.map((id) => this.row(p, id)))).filter((r) => r !== undefined);
    const ordered = rows
      .sort((x, y) => y.lastActivityAt.localeCompare(x.lastActivityAt) || x.chatId.localeCompare(y.chatId))
      .filter((r) => !after || r.lastActivityAt < after.at || (r.lastActivityAt === after.at && r.chatId > after.id));
    const chats = ordered.slice(0, size);
    const last = chats.at(-1);
    return ordered.length > size && last ? { chats, nextCursor: Buffer.from(JSON.stringify([last.lastActivityAt, last.chatId])).toString('base64url') } : { chats };
  }

  /** One chat of a list: from its actor when loaded (exact), else from the store without loading one. */
  private async row(p: Principal, chatId: string): Promise<ChatSummary | undefined> {
    const actor = this.actors.peek(p.appId, chatId);
    if (actor && !actor.gone && !actor.broken) return actor.isMember(p.userId) ? this.summary(actor, p.userId) : undefined;
    const [chat, member, newest] = await Promise.all([
      this.store.chats.get(p.appId, chatId),
      this.store.chats.member(p.appId, chatId, p.userId),
      this.store.messages.pageBackward(p.appId, chatId, undefined, 1),
    ]);
    if (!chat || !member) return undefined;
    const last = newest[0];
    const lastSeq = Math.max(chat.lastSeq, last?.seq ?? 0);
    const summary: ChatSummary = {
      ...chatView(chat),
      lastSeq,
      lastActivityAt: last && last.createdAt > chat.lastActivityAt ? last.createdAt : chat.lastActivityAt,
      role: member.role,
      readSeq: member.readSeq,
      unreadCount: Math.max(0, lastSeq - member.readSeq),
    };
    if (last) summary.lastMessage = messageView(last, last.replyToId ? await this.store.messages.get(p.appId, chatId, last.replyToId) : undefined);
    return summary;
  }

  async rename(p: Principal, chatId: string, name: string): Promise<ChatSummary | ApiError> {
    const actor = await this.actorFor(p, chatId);
    if (actor instanceof ApiError) return actor;
    const result = await actor.rename(p.userId, name);
    return result instanceof ApiError ? result : this.summary(actor, p.userId);
  }

  async remove(p: Principal, chatId: string): Promise<true | ApiError> {
    const actor = await this.actorFor(p, chatId);
    if (actor instanceof ApiError) return actor;
    const result = await actor.remove(p.userId);
    return result instanceof ApiError ? result : true;
  }

  async members(p: Principal, chatId: string): Promise<MemberView[] | ApiError> {
    const actor = await this.actorFor(p, chatId);
    if (actor instanceof ApiError) return actor;
    const rank = { owner: 0, admin: 1, member: 2 } as const;
    return [...actor.members.values()].map(memberView).sort((a, b) => a.joinedAt.localeCompare(b.joinedAt) || rank[a.role] - rank[b.role] || a.userId.localeCompare(b.userId));
  }

  async addMembers(p: Principal, chatId: string, userIds: string[], role: MemberRole): Promise<MemberView[] | ApiError> {
    const actor = await this.actorFor(p, chatId);
    if (actor instanceof ApiError) return actor;
    const added = await actor.addMembers(p.userId, userIds, role);
    return added instanceof ApiError ? added : added.map(memberView);
  }

  async removeMember(p: Principal, chatId: string, userId: string): Promise<true | ApiError> {
    const actor = await this.actorFor(p, chatId);
    return actor instanceof ApiError ? actor : actor.removeMember(p.userId, userId);
  }

  async setRole(p: Principal, chatId: string, userId: string, role: MemberRole): Promise<MemberView | ApiError> {
    const actor = await this.actorFor(p, chatId);
    if (actor instanceof ApiError) return actor;
    const result = await actor.setRole(p.userId, userId, role);
    return result instanceof ApiError ? result : memberView(result);
  }

  /** Removes a deleted user from every chat it was in (group ownership passes on). */
  async forgetUser(appId: string, userId: string): Promise<void> {
    for (const chatId of await this.store.chats.chatsOf(appId, userId)) {
      const actor = await this.actors.get(appId, chatId);
      if (!actor) continue;
      if (actor.chat.kind === 'direct') await actor.remove(userId);
      else await actor.removeMember(userId, userId);
    }
  }
}
