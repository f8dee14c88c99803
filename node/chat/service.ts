import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { ApiError, BackendUnavailableError, isApiError } from '../../common/index.ts';
import { FencedError, type ActivityPosition, type Chat, type Member, type MemberRole, type NodeStore } from '../store/index.ts';
import type { ActorDeps, SendInput, SendResult } from './actor.ts';
import type { ChatChange, EditInput } from './send-input.ts';
import type { CustomData } from './custom-data.ts';
import { LocalChatOps, loadedSummary, mentionCount, type ChatSummary, type Principal } from './local-ops.ts';
import type { ActorRegistry } from './registry.ts';
import type { ReplayDelivery, ReplayTarget, ResumePoint } from './replay.ts';
import { chatView, memberView, messageView, type MemberView, type MessageView } from './views.ts';
import type { LimitedOperation, UserWriteLimits } from './write-limits.ts';
import type { ChatCap } from './chat-cap.ts';
import type { ChatBanView, ChatModeration, Moderator, MuteView } from './chat-moderation.ts';
import type { FlagView } from './flag-views.ts';
import type { SendAdmission } from './send-admission.ts';
import type { BeforeSendHook, BeforeSendPort } from './before-send-port.ts';
import { threadUnreadCount, type ThreadState } from './thread-follows.ts';
import { threadInbox, type Inbox } from './thread-inbox.ts';
import { changeWithEvents, type ChangeEventItem, type ChatWebhooks } from './change-events.ts';

export { PAGE, type ChatSummary, type Principal } from './local-ops.ts';
export const CHAT_LIST = Object.freeze({ defaultSize: 20, maxSize: 100 });

export type ChatOpName = {
  [K in keyof LocalChatOps]: LocalChatOps[K] extends (...args: never[]) => Promise<unknown> ? K : never;
}[keyof LocalChatOps];
export type ChatOpArgs<K extends ChatOpName> = Parameters<LocalChatOps[K]>;
export type ChatOpResult<K extends ChatOpName> = Awaited<ReturnType<LocalChatOps[K]>>;

/**
 * Where a chat's operations run. Standalone every chat is local; in a cluster each chat's actor
 * lives on one node and the others forward its operations there (node/cluster).
 */
export interface ChatRouter {
  /** Runs `op` on the chat's owner; resolves with its result, ApiErrors included. */
  run<K extends ChatOpName>(appId: string, chatId: string, op: K, args: ChatOpArgs<K>): Promise<ChatOpResult<K>>;
}

/** The names of every chat operation, for the node-to-node call table. */
export const CHAT_OPS = Object.getOwnPropertyNames(LocalChatOps.prototype).filter((name) => name !== 'constructor') as ChatOpName[];

/**
 * Runs an operation on this node's actor. A write refused by the store's fence wrote nothing and
 * left the actor broken. When another writer moved the chat's head (two nodes briefly disagreed on
 * the owner), the operation runs again on a fresh actor, which reloads the chat. When another node
 * holds the chat (`FencedError.holder`), running it here cannot succeed: the FencedError goes to
 * the router, which forwards the operation to the holder.
 */
export async function runHere<K extends ChatOpName>(ops: LocalChatOps, op: K, args: ChatOpArgs<K>): Promise<ChatOpResult<K>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await (ops[op] as (...a: unknown[]) => Promise<ChatOpResult<K>>)(...args);
    } catch (error) {
      if (!(error instanceof FencedError) || error.holder) throw error;
      if (attempt >= 3) throw new BackendUnavailableError('chat ownership (moving between nodes)', { cause: error });
    }
  }
}

/**
 * Every chat is written here. Another process writing the same chat (a node on a shared Cassandra
 * keyspace that crashed and still holds it until its hold times out) makes the operation 503.
 */
export const localRouter = (ops: LocalChatOps): ChatRouter => ({
  run: (_appId, _chatId, op, args) =>
    runHere(ops, op, args).catch((error: unknown) => {
      throw error instanceof FencedError ? new BackendUnavailableError(`chat ownership (held by ${error.holder?.id ?? 'another writer'})`, { cause: error }) : error;
    }),
});

export interface ChatServiceOptions {
  store: NodeStore;
  actors: ActorRegistry;
  now: () => Date;
  /** Where a chat's operations run, given this node's own (`local`); every chat here when absent. */
  router?: (local: LocalChatOps) => ChatRouter;
  /** Where replays for resuming sockets go (the realtime layer's); nowhere when absent. */
  deliverReplay?: ReplayDelivery;
  /** Per-user write rates (see write-limits.ts); none when absent. */
  limits?: UserWriteLimits;
  /** Whether this node takes a new message (see send-admission.ts); every send when absent. */
  admission?: SendAdmission;
  /** How many chats a user may be in (see chat-cap.ts); unbounded when absent. */
  chatCap?: ChatCap;
  /** Applications' before-send hooks (see before-send-port.ts); sends are stored unasked when absent. */
  beforeSend?: BeforeSendPort;
  /** Webhook events (`chat.created`); none when absent. */
  webhooks?: ChatWebhooks;
  /** User blocks (a direct chat between users one of whom blocks the other is refused); none when absent. */
  blocks?: ActorDeps['blocks'];
  /** Applications' blocklists, applied to sends and edits (see node/moderation); none when absent. */
  blocklists?: { screen(appId: string, content: string): ApiError | string | Promise<ApiError | string> };
}

/**
 * The chat operations both transports (REST and WebSocket) call. Everything that changes a chat
 * goes through the chat's actor, on whichever node owns it; reads that need no ordering go to the
 * store directly.
 */
export class ChatService {
  readonly local: LocalChatOps;
  private readonly router: ChatRouter;
  private readonly store: NodeStore;
  private readonly actors: ActorRegistry;
  private readonly now: () => Date;
  /** Per-user write rates (see write-limits.ts); none when absent. */
  readonly limits: UserWriteLimits | undefined;
  private readonly chatCap: ChatCap | undefined;
  private readonly beforeSend: BeforeSendPort | undefined;
  private readonly webhooks: ChatWebhooks | undefined;
  private readonly blocks: ActorDeps['blocks'];
  private readonly blocklists: ChatServiceOptions['blocklists'];
  private readonly admission: SendAdmission | undefined;

  /** Built whole: every collaborator is given here, none is set later. */
  constructor(options: ChatServiceOptions) {
    ({ store: this.store, actors: this.actors, now: this.now, limits: this.limits, chatCap: this.chatCap, beforeSend: this.beforeSend, webhooks: this.webhooks, blocks: this.blocks, blocklists: this.blocklists, admission: this.admission } = options);
    this.local = new LocalChatOps(options.store, options.actors, options.deliverReplay);
    this.router = options.router ? options.router(this.local) : localRouter(this.local);
  }

  private on<K extends ChatOpName>(appId: string, chatId: string, op: K, ...args: ChatOpArgs<K>): Promise<ChatOpResult<K>> {
    return this.router.run(appId, chatId, op, args);
  }

  /** A user's write: refused at once beyond its rate, else run on the chat's owner. */
  private limited<K extends ChatOpName & LimitedOperation>(p: Principal, chatId: string, op: K, ...args: ChatOpArgs<K>): Promise<ChatOpResult<K> | ApiError> {
    const refused = this.limits?.admit(op, p);
    return refused ? Promise.resolve(refused) : this.on(p.appId, chatId, op, ...args);
  }

  /** A new message, REST or WebSocket alike: admitted here once (send-admission.ts), then screened and run on the chat's owner. */
  send(p: Principal, chatId: string, input: SendInput): Promise<SendResult | ApiError> {
    const taken = this.admission?.admit(p);
    if (taken instanceof ApiError) return Promise.resolve(taken);
    let answer: Promise<SendResult | ApiError>;
    try {
      answer = this.sendAdmitted(p, chatId, input);
    } catch (error) {
      // A send taken is always reported to the shedder, however it ends.
      answer = Promise.reject(error);
    }
    if (!taken) return answer;
    return answer.then(
      (r) => (taken(!isApiError(r)), r),
      (error: unknown) => {
        taken(false);
        throw error;
      },
    );
  }

  private sendAdmitted(p: Principal, chatId: string, input: SendInput): Promise<SendResult | ApiError> {
    const screened = this.blocklists?.screen(p.appId, input.content) ?? input.content;
    if (screened instanceof Promise) return screened.then((s) => (s instanceof ApiError ? s : this.sendScreened(p, chatId, s === input.content ? input : { ...input, content: s })));
    if (screened instanceof ApiError) return Promise.resolve(screened);
    return this.sendScreened(p, chatId, screened === input.content ? input : { ...input, content: screened });
  }

  /** A send past the application's blocklist (its content masked where the list says so). */
  private sendScreened(p: Principal, chatId: string, input: SendInput): Promise<SendResult | ApiError> {
    const hook = this.beforeSend?.hookOf(p.appId);
    return hook === undefined ? this.on(p.appId, chatId, 'send', p, chatId, input) : this.sendAsking(p, chatId, input, hook);
  }

  /**
   * A send of an application that may have a before-send hook (README, "Before-send hook"). The
   * hook is asked here, on the node that took the send, before the chat's actor sees it: the actor
   * never waits for a hook. Only a member's new message is asked about: a non-member gets
   * CHAT_NOT_FOUND without a call, and a retry whose idempotency key names a stored message gets
   * that message (as stored) without a call. A retry while the first send is still being asked
   * about or written asks again; the chat still stores one message, the first. A send with files
   * gives the hook their metadata, read from the attachments (one read each, from memory when this
   * node finalized them).
   */
  private async sendAsking(p: Principal, chatId: string, input: SendInput, pending: BeforeSendHook | Promise<BeforeSendHook | undefined>): Promise<SendResult | ApiError> {
    const hook = await pending;
    if (!hook || !this.beforeSend) return this.on(p.appId, chatId, 'send', p, chatId, input);
    const [member, earlier] = await Promise.all([
      this.isMember(p, chatId),
      input.clientKey === undefined ? undefined : this.store.messages.byClientKey(p.appId, chatId, p.userId, input.clientKey),
    ]);
    if (!member) return new ApiError('CHAT_NOT_FOUND', 'no such chat, or you are not a member');
    if (earlier) return this.on(p.appId, chatId, 'send', p, chatId, input);
    // The hook sees the files' metadata, not just their ids; a send whose files the actor would
    // refuse (not finalized, not the sender's, expired) is refused without asking it.
    const port = this.actors.attachments;
    const files = input.attachments?.length && port ? await port.describe({ appId: p.appId, chatId, senderId: p.userId, uploadIds: input.attachments }) : undefined;
    if (files instanceof ApiError) return files;
    const checked = await this.beforeSend.ask(hook, p, chatId, input, files);
    return checked instanceof ApiError ? checked : this.on(p.appId, chatId, 'send', p, chatId, checked);
  }

  /** Whether `p` is in the chat: from its actor when loaded here, else one store read. */
  private async isMember(p: Principal, chatId: string): Promise<boolean> {
    const actor = this.actors.peek(p.appId, chatId);
    if (actor?.status === 'live') return actor.isMember(p.userId);
    return (await this.store.chats.member(p.appId, chatId, p.userId)) !== undefined;
  }

  async edit(p: Principal, chatId: string, messageId: string, change: EditInput): Promise<MessageView | ApiError> {
    if (change.content === undefined) return this.limited(p, chatId, 'edit', p, chatId, messageId, change);
    const screened = await (this.blocklists?.screen(p.appId, change.content) ?? change.content);
    if (screened instanceof ApiError) return screened;
    return this.limited(p, chatId, 'edit', p, chatId, messageId, { ...change, content: screened });
  }

  deleteMessage(p: Principal, chatId: string, messageId: string): Promise<MessageView | ApiError> {
    return this.limited(p, chatId, 'deleteMessage', p, chatId, messageId);
  }

  react(p: Principal, chatId: string, messageId: string, reaction: string, add: boolean): Promise<MessageView | ApiError> {
    return this.limited(p, chatId, 'react', p, chatId, messageId, reaction, add);
  }

  reactions(p: Principal, chatId: string, messageId: string, query: ChatOpArgs<'reactions'>[3]): Promise<ChatOpResult<'reactions'>> {
    return this.on(p.appId, chatId, 'reactions', p, chatId, messageId, query);
  }

  pin(p: Principal, chatId: string, messageId: string, add: boolean): Promise<ChatOpResult<'pin'>> {
    return this.limited(p, chatId, 'pin', p, chatId, messageId, add);
  }

  pins(p: Principal, chatId: string): Promise<ChatOpResult<'pins'>> {
    return this.on(p.appId, chatId, 'pins', p, chatId);
  }

  markRead(p: Principal, chatId: string, seq: number): Promise<number | ApiError> {
    return this.limited(p, chatId, 'markRead', p, chatId, seq);
  }

  async typing(p: Principal, chatId: string, started: boolean): Promise<ApiError | undefined> {
    return (await this.limited(p, chatId, 'typing', p, chatId, started)) ?? undefined;
  }

  thread(p: Principal, chatId: string, parentId: string, size: number, lastReply: string | undefined): Promise<MessageView[] | ApiError> {
    return this.on(p.appId, chatId, 'thread', p, chatId, parentId, size, lastReply);
  }

  followThread(p: Principal, chatId: string, parentId: string, following: boolean): Promise<ThreadState | ApiError> {
    return this.on(p.appId, chatId, 'followThread', p, chatId, parentId, following);
  }

  markThreadRead(p: Principal, chatId: string, parentId: string, seq: number): Promise<ThreadState | ApiError> {
    return this.on(p.appId, chatId, 'markThreadRead', p, chatId, parentId, seq);
  }

  threadState(p: Principal, chatId: string, parentId: string): Promise<ThreadState | ApiError> {
    return this.on(p.appId, chatId, 'threadState', p, chatId, parentId);
  }

  /** The principal's threads inbox (thread-inbox.ts): read from the store on any node, no actor involved. */
  threadInbox(p: Principal, size: number, cursor: string | undefined, unreadOnly: boolean): Promise<Inbox | ApiError> {
    return threadInbox(this.store, p.appId, p.userId, size, cursor, unreadOnly);
  }

  history(p: Principal, chatId: string, size: number, lastMessage: string | undefined): Promise<MessageView[] | ApiError> {
    return this.on(p.appId, chatId, 'history', p, chatId, size, lastMessage);
  }

  async get(p: Principal, chatId: string): Promise<ChatSummary | ApiError> {
    const summary = await this.on(p.appId, chatId, 'get', p, chatId);
    return summary instanceof ApiError ? summary : (await this.withPeers(p.appId, [summary]))[0]!;
  }

  /** Direct chats' peers as their users are now (username, display name): one user read each. */
  private async withPeers(appId: string, summaries: ChatSummary[]): Promise<ChatSummary[]> {
    return Promise.all(
      summaries.map(async (s) => {
        if (!s.peer) return s;
        const user = await this.store.users.get(appId, s.peer.userId);
        const { peer: _, ...rest } = s;
        return user ? { ...rest, peer: { userId: user.id, username: user.username, displayName: user.displayName } } : rest;
      }),
    );
  }

  /** A group's new name, a chat's new data, or both (ChatActor.rename). */
  rename(p: Principal, chatId: string, change: ChatChange): Promise<ChatSummary | ApiError> {
    return this.limited(p, chatId, 'rename', p, chatId, change);
  }

  remove(p: Principal, chatId: string): Promise<true | ApiError> {
    return this.limited(p, chatId, 'remove', p, chatId);
  }

  members(p: Principal, chatId: string): Promise<MemberView[] | ApiError> {
    return this.on(p.appId, chatId, 'members', p, chatId);
  }

  addMembers(p: Principal, chatId: string, userIds: string[], role: MemberRole): Promise<MemberView[] | ApiError> {
    return this.limited(p, chatId, 'addMembers', p, chatId, userIds, role);
  }

  removeMember(p: Principal, chatId: string, userId: string): Promise<true | ApiError> {
    return this.limited(p, chatId, 'removeMember', p, chatId, userId);
  }

  setRole(p: Principal, chatId: string, userId: string, role: MemberRole): Promise<MemberView | ApiError> {
    return this.limited(p, chatId, 'setRole', p, chatId, userId, role);
  }

  // ---- moderation (README, "Moderation") ---------------------------------------------------------

  /** A mute, unmute, ban or unban, by the backend or a group's owner or admin (its writes counted as the user's). */
  moderate(appId: string, chatId: string, by: Moderator, change: ChatModeration): Promise<MuteView | ChatBanView | true | ApiError> {
    if (by.kind === 'user') {
      const refused = this.limits?.admit('moderate', { appId, userId: by.userId });
      if (refused) return Promise.resolve(refused);
    }
    return this.on(appId, chatId, 'moderate', appId, chatId, by, change);
  }

  chatMutes(appId: string, chatId: string, by: Moderator): Promise<MuteView[] | ApiError> {
    return this.on(appId, chatId, 'chatMutes', appId, chatId, by);
  }

  chatBans(appId: string, chatId: string, by: Moderator, after: string | undefined, size: number): Promise<{ bans: ChatBanView[]; nextCursor?: string } | ApiError> {
    return this.on(appId, chatId, 'chatBans', appId, chatId, by, this.now().toISOString(), after, size);
  }

  flag(p: Principal, chatId: string, messageId: string, reason: string): Promise<{ flag: FlagView; hidden: boolean } | ApiError> {
    return this.limited(p, chatId, 'flag', p, chatId, messageId, reason, uuidv7(), this.now().toISOString());
  }

  review(appId: string, chatId: string, messageId: string, outcome: 'restore' | 'delete'): Promise<MessageView | ApiError> {
    return this.on(appId, chatId, 'review', appId, chatId, messageId, outcome);
  }

  /** Asks the chat's owner to replay what a resuming socket missed (see LocalChatOps.replay). */
  replay(appId: string, chatId: string, userId: string, point: ResumePoint, to: ReplayTarget, limit: number): Promise<null> {
    return this.on(appId, chatId, 'replay', appId, chatId, userId, point, to, limit);
  }

  // ---- chats ------------------------------------------------------------------------------------

  async createDirect(p: Principal, otherId: string, data?: CustomData): Promise<{ chat: Chat; created: boolean } | ApiError> {
    const refused = this.limits?.admit('createDirect', p);
    if (refused) return refused;
    if (otherId === p.userId) return new ApiError('VALIDATION_FAILED', 'a direct chat needs another user', { errors: [{ path: '/body/userId', message: 'is yourself' }] });
    if (!(await this.store.users.get(p.appId, p.userId))) return new ApiError('USER_NOT_FOUND', 'your user no longer exists');
    if (!(await this.store.users.get(p.appId, otherId))) return new ApiError('USER_NOT_FOUND', `no user ${otherId} in this application`);
    const blocked = await this.blocks?.refusal(p.appId, p.userId, otherId);
    if (blocked) return blocked;
    const full = await this.chatCap?.check(p.appId, [p.userId, otherId]);
    if (full) return full;
    const now = this.now().toISOString();
    const chat: Chat = { appId: p.appId, id: randomUUID(), kind: 'direct', createdBy: p.userId, createdAt: now, updatedAt: now, lastSeq: 0, lastActivityAt: now, memberCount: 2 };
    if (data !== undefined) chat.data = data;
    const member = (userId: string): Member => ({ appId: p.appId, chatId: chat.id, userId, role: 'member', joinedAt: now, readSeq: 0 });
    const members: [Member, Member] = [member(p.userId), member(otherId)];
    const result = await changeWithEvents(this.webhooks, p.appId, [chatCreated(chat, members)], (events) => this.store.chats.ensureDirect(chat, members, { events }), (r) => r.created);
    if (result.created) await this.on(p.appId, result.chat.id, 'announce', p.appId, result.chat.id, [p.userId, otherId]);
    return result;
  }

  async createGroup(p: Principal, name: string, memberIds: string[], data?: CustomData): Promise<Chat | ApiError> {
    const refused = this.limits?.admit('createGroup', p);
    if (refused) return refused;
    const others = [...new Set(memberIds)].filter((id) => id !== p.userId);
    if (!(await this.store.users.get(p.appId, p.userId))) return new ApiError('USER_NOT_FOUND', 'your user no longer exists');
    for (const id of others) if (!(await this.store.users.get(p.appId, id))) return new ApiError('USER_NOT_FOUND', `no user ${id} in this application`);
    const full = await this.chatCap?.check(p.appId, [p.userId, ...others]);
    if (full) return full;
    const now = this.now().toISOString();
    const chat: Chat = { appId: p.appId, id: randomUUID(), kind: 'group', name, createdBy: p.userId, createdAt: now, updatedAt: now, lastSeq: 0, lastActivityAt: now, memberCount: 1 + others.length };
    if (data !== undefined) chat.data = data;
    const members: Member[] = [p.userId, ...others].map((userId) => ({ appId: p.appId, chatId: chat.id, userId, role: userId === p.userId ? 'owner' : 'member', joinedAt: now, readSeq: 0 }));
    await changeWithEvents(this.webhooks, p.appId, [chatCreated(chat, members)], (events) => this.store.chats.create(chat, members, { events }), () => true);
    await this.on(p.appId, chat.id, 'announce', p.appId, chat.id, members.map((m) => m.userId));
    return chat;
  }

  /**
   * My chats, most recent activity first, cursor-paged, in O(page) whatever my chat count: a page
   * is read from my activity index (see ChatStore.chatsByActivity), which a chat's actor moves
   * behind its messages: a quiet chat at its first message (its activity write, at most once per
   * CHAT_LIMITS.activityWriteMs), a busy one at most once per CHAT_LIMITS.listMoveMs (list-moves.ts);
   * each chat's summary is its current state. So a quiet chat rises to its place within about a
   * second, a busy one within listMoveMs, and a page is ordered by the summaries it shows. The cursor is opaque:
   * the index position after the page. A chat I left after the index was read is left out, so a page may hold fewer than `size`.
   */
  async list(p: Principal, size: number, cursor: string | undefined): Promise<{ chats: ChatSummary[]; nextCursor?: string } | ApiError> {
    let after: ActivityPosition | undefined;
    if (cursor) {
      try {
        const [at, chatId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
        if (typeof at !== 'string' || typeof chatId !== 'string') throw new Error('shape');
        after = { at, chatId };
      } catch {
        return new ApiError('VALIDATION_FAILED', 'cursor is not one this service issued', { errors: [{ path: '/query/cursor', message: 'invalid' }] });
      }
    }
    const entries = await this.store.chats.chatsByActivity(p.appId, p.userId, after, size + 1);
    const page = entries.slice(0, size);
    const chats = (await this.withPeers(p.appId, (await Promise.all(page.map((e) => this.row(p, e.chatId)))).filter((r) => r !== undefined)))
      .sort((x, y) => y.lastActivityAt.localeCompare(x.lastActivityAt) || y.chatId.localeCompare(x.chatId));
    const last = page.at(-1);
    return entries.length > size && last ? { chats, nextCursor: Buffer.from(JSON.stringify([last.at, last.chatId])).toString('base64url') } : { chats };
  }

  /**
   * One chat of a list: from its actor when it is loaded on this node (exact), else from the store
   * without loading one (the store trails the owner's actor by at most the writes in flight).
   */
  private async row(p: Principal, chatId: string): Promise<ChatSummary | undefined> {
    const actor = this.actors.peek(p.appId, chatId);
    if (actor?.status === 'live') return actor.isMember(p.userId) ? loadedSummary(this.store, actor, p.userId) : undefined;
    const [chat, member, newest] = await Promise.all([
      this.store.chats.get(p.appId, chatId),
      this.store.chats.member(p.appId, chatId, p.userId),
      this.store.messages.pageBackward(p.appId, chatId, undefined, 1),
    ]);
    if (!chat || !member) return undefined;
    // A direct chat's two members name the peer; a group's count is on its row, written by its
    // actor after each membership change (the members are read only for a row older than that).
    const members = chat.kind === 'direct' || chat.memberCount === undefined ? await this.store.chats.members(p.appId, chatId) : undefined;
    const peer = chat.kind === 'direct' ? members!.find((m) => m.userId !== p.userId)?.userId : undefined;
    const last = newest[0];
    const lastSeq = Math.max(chat.lastSeq, last?.seq ?? 0);
    const summary: ChatSummary = {
      ...chatView(chat),
      lastSeq,
      lastActivityAt: last && last.createdAt > chat.lastActivityAt ? last.createdAt : chat.lastActivityAt,
      role: member.role,
      readSeq: member.readSeq,
      unreadCount: Math.max(0, lastSeq - member.readSeq),
      mentionCount: await mentionCount(this.store, p.appId, chatId, p.userId, member.readSeq, lastSeq),
      threadUnreadCount: await threadUnreadCount(this.store, p.appId, chatId, p.userId),
      memberCount: members?.length ?? chat.memberCount ?? 0,
      ...(peer ? { peer: { userId: peer } } : {}),
    };
    if (last) summary.lastMessage = messageView(last, last.replyToId ? await this.store.messages.get(p.appId, chatId, last.replyToId) : undefined);
    return summary;
  }

  /** Removes a deleted user from every chat it was in (group ownership passes on). */
  async forgetUser(appId: string, userId: string): Promise<void> {
    for (const chatId of await this.store.chats.chatsOf(appId, userId)) await this.on(appId, chatId, 'forget', appId, chatId, userId);
  }
}

/**
 * A new chat's webhook event. Its check is the creator's membership: members are written last
 * (a direct chat's only once its pair is claimed), so a chat row a crash left without them fails it.
 */
function chatCreated(chat: Chat, members: Member[]): ChangeEventItem {
  return { type: 'chat.created', data: { ...chatView(chat), members: members.map(memberView) }, check: { kind: 'member', chatId: chat.id, userId: chat.createdBy, present: true } };
}
