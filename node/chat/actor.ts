import { randomUUID } from 'node:crypto';
import { ApiError } from '../../common/index.ts';
import { FencedError, type Chat, type ChatHead, type Member, type MemberRole, type NodeStore, type StoredMessage } from '../store/index.ts';
import { boundedQueue, type AdmissionPolicy } from './admission.ts';
import { ChatActivity } from './chat-activity.ts';
import type { ChatCap } from './chat-cap.ts';
import type { ChatEvent, EventSink } from './events.ts';
import { GroupCommit } from './group-commit.ts';
import { CHAT_LIMITS } from './limits.ts';
import { MessageCache } from './message-cache.ts';
import { MessageReads } from './message-reads.ts';
import { newMessageId } from './message-id.ts';
import { SenderReads } from './sender-reads.ts';
import { SerialQueue } from './serial-queue.ts';
import { chatView, memberView, messageView, reactionView, type MessageView } from './views.ts';
import { changeWithEvents, type ChatWebhooks } from '../webhooks/index.ts';
import { applyModeration, mutedRefusal, mutesOf, type ChatBanView, type ChatModeration, type Moderator, type MuteView } from './chat-moderation.ts';

export interface ActorDeps {
  store: NodeStore;
  events: EventSink;
  now: () => Date;
  /** Seconds from enqueue to durable, for the ack-latency histogram. */
  observeAck?: (seconds: number) => void;
  /** Seconds one batch of message writes took in the store, for the store-write histogram. */
  observeWrite?: (seconds: number) => void;
  /** `n` new messages of the application became durable (usage counts; each message once). */
  messagesStored?: (appId: string, n: number) => void;
  /** Whether a chat takes one more write (default: a bounded queue and delay, see admission.ts). */
  admission?: AdmissionPolicy;
  /** Wait for larger batches after a write (see GroupCommitOptions.linger); none by default. */
  linger?: { ms: number; minBatch: number };
  /** How many chats a user may be in; unbounded when absent. */
  chatCap?: ChatCap;
  /** Webhook events of the chat's writes (none when absent). */
  webhooks?: ChatWebhooks;
  /** Whether the two users of a direct chat block each other (a send's refusal); nobody blocks when absent. */
  blocks?: { refusal(appId: string, userId: string, otherId: string): ApiError | undefined | Promise<ApiError | undefined> };
}

export interface SendInput {
  content: string;
  replyTo?: string;
  clientKey?: string;
}

export interface SendResult {
  message: MessageView;
  /** False when an earlier send with the same idempotency key is returned again. */
  created: boolean;
}

export type { ChangedMessage } from './message-reads.ts';

/** A message write on its way to the store, with the event it makes once durable. */
interface PendingWrite {
  message: StoredMessage;
  event: ChatEvent & { rev: number };
  enqueuedAt: number;
}

/** `live`; `broken` after a failed or fenced write (the registry replaces it); `gone` once the chat is deleted. */
export type ActorStatus = 'live' | 'broken' | 'gone';

/** A result that is decided now but delivered when its write is durable. */
class Later<T> {
  constructor(readonly promise: Promise<T>) {}
}
async function settle<T>(result: Promise<T | ApiError | Later<T>>): Promise<T | ApiError> {
  const value = await result;
  return value instanceof Later ? value.promise : value;
}

/**
 * Why one more reaction cannot go on a message, if it cannot: its size is bounded (a message and
 * its reactions are stored and rewritten as one value) in distinct values, per user and in all.
 */
function reactionRefused(reactions: StoredMessage['reactions'], userId: string, reaction: string): ApiError | undefined {
  const refuse = (rule: string) => new ApiError('VALIDATION_FAILED', `a message takes ${rule}`, { errors: [{ path: '/body/reaction', message: rule }] });
  if (reactions.length >= CHAT_LIMITS.reactionEntries) return refuse(`at most ${CHAT_LIMITS.reactionEntries} reactions in all`);
  if (reactions.filter((r) => r.userId === userId).length >= CHAT_LIMITS.reactionsPerUser) return refuse(`at most ${CHAT_LIMITS.reactionsPerUser} reactions per user`);
  if (!reactions.some((r) => r.reaction === reaction) && new Set(reactions.map((r) => r.reaction)).size >= CHAT_LIMITS.reactionsPerMessage) {
    return refuse(`at most ${CHAT_LIMITS.reactionsPerMessage} distinct reactions`);
  }
  return undefined;
}

/** Membership writes apply only while this node writes the chat (see ChatWriters). */
const FENCED = Object.freeze({ fenced: true });
const notFound = () => new ApiError('CHAT_NOT_FOUND', 'no such chat, or you are not a member');
const noMessage = () => new ApiError('MESSAGE_NOT_FOUND', 'no such message in this chat');
const rank = (role: MemberRole) => (role === 'owner' ? 0 : role === 'admin' ? 1 : 2);

type Change = ApiError | { message: StoredMessage; event: 'message.edited' | 'message.deleted' | 'message.hidden' | 'message.restored' | 'reaction.added' | 'reaction.removed' | undefined; reaction?: StoredMessage['reactions'][number] };

/**
 * The single writer of one chat on this node, built from its mechanisms: a serial queue (one
 * operation at a time, in arrival order, so seqs are assigned without gaps or repeats), a group
 * commit (message writes batched, one batch in flight; each operation acknowledged only once its
 * batch is durable, its event published after that, in seq order), a message cache, and the chat
 * row's activity writer. Membership is cached, so a send costs no store read.
 *
 * If a write fails or is fenced (another node writes the chat), the actor is `broken`: everything
 * pending is refused, and the registry replaces it with a fresh actor that reloads the head from
 * the store, so no seq is ever assigned twice.
 */
export class ChatActor {
  chat!: Chat;
  readonly members = new Map<string, Member>();
  private readonly queue = new SerialQueue();
  private readonly commit: GroupCommit<PendingWrite>;
  private cache = new MessageCache(CHAT_LIMITS.recentMessages, 0);
  /** What a resuming client missed, and the newest message: the read side replay.ts and chat lists use. */
  readonly reads: MessageReads;
  private readonly activity: ChatActivity;
  /** Moves each sender's read mark to its own messages, written behind (sender-reads.ts). */
  private readonly senderReads: SenderReads;
  /** The activity time the members' chat lists were last moved to (the stored row's, at load). */
  private indexedAt: string | undefined;
  private readonly admission: AdmissionPolicy;
  private readonly pendingByKey = new Map<string, Promise<SendResult>>();
  /** Highest seq whose event has been published (and so is durable). */
  publishedSeq = 0;
  private assignedSeq = 0;
  /** Highest revision published; every message write (new or changed) takes the next one. */
  publishedRev = 0;
  private assignedRev = 0;
  /** The chat's head as this actor last wrote or read it: the fence of its next batch. */
  private head: ChatHead = { seq: 0, rev: 0 };
  status: ActorStatus = 'live';
  lastUsed = Date.now();

  constructor(
    readonly appId: string,
    readonly chatId: string,
    private readonly deps: ActorDeps,
  ) {
    this.admission = deps.admission ?? boundedQueue();
    this.reads = new MessageReads({
      appId,
      chatId,
      store: deps.store,
      cache: () => this.cache,
      published: () => ({ seq: this.publishedSeq, rev: this.publishedRev }),
    });
    this.commit = new GroupCommit<PendingWrite>({
      maxBatch: CHAT_LIMITS.batchMessages,
      write: (batch) => this.write(batch),
      onDurable: (batch) => this.durable(batch),
      ...(deps.linger ? { linger: deps.linger } : {}),
    });
    this.activity = new ChatActivity(async () => {
      const chat = { ...this.chat };
      await deps.store.chats.writeActivity(chat, [...this.members.keys()], this.indexedAt);
      this.indexedAt = chat.lastActivityAt;
    }, CHAT_LIMITS.activityWriteMs);
    this.senderReads = new SenderReads({ appId, chatId, store: deps.store, members: this.members, run: (op) => this.run(op) }, CHAT_LIMITS.activityWriteMs);
  }

  /** Loads chat, members and the chat's head. False when the chat does not exist. */
  async load(): Promise<boolean> {
    const { store } = this.deps;
    const chat = await store.chats.get(this.appId, this.chatId);
    if (!chat) return false;
    const [members, lastSeq, lastRev] = await Promise.all([
      store.chats.members(this.appId, this.chatId),
      store.messages.lastSeq(this.appId, this.chatId),
      store.messages.lastRev(this.appId, this.chatId),
    ]);
    this.head = { seq: lastSeq, rev: lastRev };
    this.assignedRev = this.publishedRev = lastRev;
    this.cache = new MessageCache(CHAT_LIMITS.recentMessages, lastRev);
    this.chat = { ...chat, lastSeq: Math.max(chat.lastSeq, lastSeq), memberCount: members.length };
    this.indexedAt = chat.lastActivityAt;
    for (const m of members) this.members.set(m.userId, m);
    this.assignedSeq = this.publishedSeq = this.chat.lastSeq;
    for (const m of (await store.messages.pageBackward(this.appId, this.chatId, undefined, CHAT_LIMITS.preloadMessages)).reverse()) this.cache.remember(m);
    return true;
  }

  get idle(): boolean {
    return !this.commit.busy && this.queue.length === 0 && this.pendingByKey.size === 0;
  }

  /** Resolves when every operation queued so far has run and its writes are durable (or failed). */
  async drain(): Promise<void> {
    await this.queue.idle();
    await this.commit.drained();
    await this.activity.flush();
    await this.senderReads.flush();
  }

  isMember(userId: string): boolean {
    return this.members.has(userId);
  }

  role(userId: string): MemberRole | undefined {
    return this.members.get(userId)?.role;
  }

  /** Runs `op` after every earlier operation of this chat has run (not necessarily been made durable). */
  private run<T>(op: () => T | Promise<T>): Promise<T | ApiError> {
    this.lastUsed = Date.now();
    return this.queue.run(async () => {
      if (this.status === 'gone') return notFound();
      if (this.status === 'broken') return new ApiError('UNAVAILABLE', 'the chat is recovering from a storage failure; retry');
      try {
        return await op();
      } catch (error) {
        // A fenced membership write: another node writes the chat now. Reload before anything else.
        if (error instanceof FencedError) this.status = 'broken';
        throw error;
      }
    });
  }

  /** Refuses a write when this chat's queue is too long or too slow (see admission.ts). */
  private admit(): ApiError | undefined {
    const oldest = this.commit.oldest();
    return this.admission.admit({ queued: this.queue.length + this.commit.pending, oldestWaitMs: oldest ? performance.now() - oldest.enqueuedAt : 0 });
  }

  // ---- messages -------------------------------------------------------------------------------

  send(userId: string, input: SendInput): Promise<SendResult | ApiError> {
    const keyId = input.clientKey === undefined ? undefined : `${userId}\u0000${input.clientKey}`;
    const inFlight = keyId === undefined ? undefined : this.pendingByKey.get(keyId);
    if (inFlight) return inFlight.then((r) => ({ ...r, created: false }));
    const refused = this.admit();
    if (refused) return Promise.resolve(refused);
    return settle(this.run(async (): Promise<SendResult | ApiError | Later<SendResult>> => {
      if (!this.isMember(userId)) return notFound();
      const muted = mutedRefusal(this.members.get(userId), this.deps.now);
      if (muted) return muted;
      if (this.chat.kind === 'direct' && this.deps.blocks) {
        const other = [...this.members.keys()].find((id) => id !== userId);
        const blocked = other === undefined ? undefined : await this.deps.blocks.refusal(this.appId, userId, other);
        if (blocked) return blocked;
      }
      // A duplicate queued behind the original finds it here, still being written.
      const queuedBehind = keyId === undefined ? undefined : this.pendingByKey.get(keyId);
      if (queuedBehind) return new Later(queuedBehind.then((r) => ({ ...r, created: false })));
      if (input.clientKey !== undefined) {
        const earlier = await this.deps.store.messages.byClientKey(this.appId, this.chatId, userId, input.clientKey);
        if (earlier) return { message: await this.view(earlier), created: false };
      }
      let replyTo: StoredMessage | undefined;
      if (input.replyTo !== undefined) {
        replyTo = await this.message(input.replyTo);
        if (!replyTo) return new ApiError('MESSAGE_NOT_FOUND', 'replyTo names no message of this chat');
      }
      const seq = ++this.assignedSeq;
      const message: StoredMessage = { appId: this.appId, chatId: this.chatId, id: newMessageId(seq), seq, senderId: userId, content: input.content, createdAt: this.deps.now().toISOString(), reactions: [] };
      if (replyTo) message.replyToId = replyTo.id;
      if (input.clientKey !== undefined) message.clientKey = input.clientKey;
      const view = messageView(message, replyTo);
      const durable = this.enqueue(message, { type: 'message.new', chatId: this.chatId, seq, rev: 0, message: view });
      const result = durable.then(() => ({ message: view, created: true }));
      if (keyId !== undefined) {
        this.pendingByKey.set(keyId, result);
        void result.catch(() => undefined).finally(() => this.pendingByKey.delete(keyId));
      }
      return new Later(result);
    }));
  }

  edit(userId: string, messageId: string, content: string): Promise<MessageView | ApiError> {
    return this.change(userId, messageId, true, (m) => {
      if (m.senderId !== userId) return new ApiError('NOT_ALLOWED', 'only the author can edit a message');
      if (m.deletedAt) return new ApiError('MESSAGE_DELETED', 'a deleted message cannot be edited');
      return { message: { ...m, content, editedAt: this.deps.now().toISOString() }, event: 'message.edited' };
    });
  }

  deleteMessage(userId: string, messageId: string): Promise<MessageView | ApiError> {
    return this.change(userId, messageId, false, (m) => {
      const role = this.role(userId);
      if (m.senderId !== userId && role !== 'owner' && role !== 'admin') return new ApiError('NOT_ALLOWED', 'only the author or a chat admin can delete a message');
      if (m.deletedAt) return { message: m, event: undefined };
      return { message: { ...m, content: '', reactions: [], deletedAt: this.deps.now().toISOString() }, event: 'message.deleted' };
    });
  }

  react(userId: string, messageId: string, reaction: string, add: boolean): Promise<MessageView | ApiError> {
    return this.change(userId, messageId, true, (m) => {
      if (m.deletedAt) return new ApiError('MESSAGE_DELETED', 'a deleted message takes no reactions');
      const existing = m.reactions.find((r) => r.userId === userId && r.reaction === reaction);
      if (add) {
        if (existing) return { message: m, event: undefined };
        const refused = reactionRefused(m.reactions, userId, reaction);
        if (refused) return refused;
        const added = { reactionId: randomUUID(), userId, reaction, createdAt: this.deps.now().toISOString() };
        return { message: { ...m, reactions: [...m.reactions, added] }, event: 'reaction.added', reaction: added };
      }
      if (!existing) return { message: m, event: undefined };
      return { message: { ...m, reactions: m.reactions.filter((r) => r !== existing) }, event: 'reaction.removed', reaction: existing };
    });
  }

  /**
   * Read-modify-write of one message through the batch; `apply` returns its new state and event
   * (none for a no-op). A muted member's change is refused when `speaks` (edits and reactions; a
   * muted member may still delete its own messages).
   */
  private change(userId: string | undefined, messageId: string, speaks: boolean, apply: (m: StoredMessage) => Change): Promise<MessageView | ApiError> {
    const refused = this.admit();
    if (refused) return Promise.resolve(refused);
    return settle(this.run(async (): Promise<MessageView | ApiError | Later<MessageView>> => {
      if (userId !== undefined && !this.isMember(userId)) return notFound();
      const muted = speaks && userId !== undefined ? mutedRefusal(this.members.get(userId), this.deps.now) : undefined;
      if (muted) return muted;
      const current = await this.message(messageId);
      if (!current) return noMessage();
      const outcome = apply(current);
      if (outcome instanceof ApiError) return outcome;
      const view = await this.view(outcome.message);
      if (!outcome.event) return view;
      const m = outcome.message;
      const event: ChatEvent & { rev: number } =
        outcome.event === 'reaction.added' || outcome.event === 'reaction.removed'
          ? { type: outcome.event, chatId: this.chatId, seq: m.seq, rev: 0, reaction: reactionView(m, outcome.reaction!) }
          : { type: outcome.event, chatId: this.chatId, seq: m.seq, rev: 0, message: view };
      // Later changes to the same message read this state, even before it is durable.
      this.cache.pending(m);
      return new Later(this.enqueue(m, event).then(() => view));
    }));
  }

  /**
   * A review's change of a message (README, "Moderation"): hidden pending review (enough flags),
   * restored (dismissed), or deleted. Not a member's write: no membership, role or mute applies.
   */
  moderateMessage(messageId: string, outcome: 'hide' | 'restore' | 'delete'): Promise<MessageView | ApiError> {
    return this.change(undefined, messageId, false, (m) => {
      const at = this.deps.now().toISOString();
      if (m.deletedAt) return { message: m, event: undefined };
      if (outcome === 'delete') return { message: { ...m, content: '', reactions: [], deletedAt: at }, event: 'message.deleted' };
      if (outcome === 'hide') return m.hiddenAt ? { message: m, event: undefined } : { message: { ...m, hiddenAt: at }, event: 'message.hidden' };
      if (!m.hiddenAt) return { message: m, event: undefined };
      const { hiddenAt: _, ...restored } = m;
      return { message: restored, event: 'message.restored' };
    });
  }

  /** A message of this chat, from memory when recent, else one store read. */
  messageOf(id: string): Promise<StoredMessage | undefined> {
    return this.message(id);
  }

  private async message(id: string): Promise<StoredMessage | undefined> {
    return this.cache.get(id) ?? (await this.deps.store.messages.get(this.appId, this.chatId, id));
  }

  private view(m: StoredMessage): Promise<MessageView> {
    return this.reads.view(m);
  }

  // ---- group commit -----------------------------------------------------------------------------

  /** Queues a message write; it takes the chat's next revision, which its event carries. */
  private enqueue(message: StoredMessage, event: ChatEvent & { rev: number }): Promise<void> {
    message.rev = event.rev = ++this.assignedRev;
    return this.commit.add({ message, event, enqueuedAt: performance.now() });
  }

  /** One batch, fenced on the head this actor holds: the store refuses it if another writer moved on. */
  private async write(batch: PendingWrite[]): Promise<void> {
    const to = { ...this.head };
    for (const w of batch) {
      to.rev = Math.max(to.rev, w.message.rev ?? 0);
      if (w.event.type === 'message.new') to.seq = Math.max(to.seq, w.message.seq);
    }
    const hooks = this.deps.webhooks;
    const made = hooks?.messageEvents(this.appId, batch) ?? [];
    const events = Array.isArray(made) ? made : await made;
    const started = performance.now();
    try {
      await this.deps.store.messages.put(batch.map((w) => w.message), { from: this.head, to }, events.length > 0 ? events : undefined);
      this.deps.observeWrite?.((performance.now() - started) / 1000);
    } catch (error) {
      this.status = 'broken';
      hooks?.written(events, false);
      throw error;
    }
    hooks?.written(events, true);
    this.head = to;
  }

  /** A batch is durable: it becomes the chat's state, and its events go out in seq order. */
  private durable(batch: PendingWrite[]): void {
    const now = performance.now();
    let stored = 0;
    for (const w of batch) {
      this.cache.remember(w.message);
      this.publishedRev = Math.max(this.publishedRev, w.message.rev ?? 0);
      if (w.message.seq > this.publishedSeq && w.event.type === 'message.new') {
        this.publishedSeq = w.message.seq;
        this.chat.lastSeq = w.message.seq;
        this.chat.lastActivityAt = w.message.createdAt;
      }
      if (w.event.type === 'message.new') {
        stored++;
        this.senderReads.sent(w.message.senderId, w.message.seq);
      }
      this.deps.observeAck?.((now - w.enqueuedAt) / 1000);
      this.deps.events.chatEvent(this.appId, w.event);
    }
    if (stored > 0) this.deps.messagesStored?.(this.appId, stored);
    if (stored > 0 && this.deps.webhooks) {
      const views = batch.flatMap((w) => (w.event.type === 'message.new' ? [w.event.message] : []));
      this.deps.webhooks.stored(this.appId, this.chatId, views, [...this.members.keys()]);
    }
    this.activity.touch();
  }

  // ---- read marks, typing, membership -----------------------------------------------------------

  markRead(userId: string, seq: number): Promise<number | ApiError> {
    return this.run(async () => {
      const member = this.members.get(userId);
      if (!member) return notFound();
      const target = Math.min(seq, this.publishedSeq);
      if (target <= member.readSeq) return member.readSeq;
      const stored = await this.deps.store.chats.markRead(this.appId, this.chatId, userId, target);
      if (stored === undefined) return notFound();
      member.readSeq = stored;
      this.deps.events.chatEvent(this.appId, { type: 'read.updated', chatId: this.chatId, userId, seq: stored });
      return stored;
    });
  }

  typing(userId: string, started: boolean): ApiError | undefined {
    if (!this.isMember(userId)) return notFound();
    const muted = mutedRefusal(this.members.get(userId), this.deps.now);
    if (muted) return muted;
    this.deps.events.chatEvent(this.appId, { type: started ? 'typing.started' : 'typing.stopped', chatId: this.chatId, userId });
    return undefined;
  }

  /** Moves the live connections of a new chat's members into its topic and tells them. */
  announceMembers(userIds: string[]): void {
    for (const userId of userIds) this.deps.events.membershipMoved(this.appId, this.chatId, userId, true);
    for (const userId of userIds) {
      const role = this.role(userId);
      this.deps.events.chatEvent(this.appId, { type: 'membership.changed', chatId: this.chatId, userId, change: 'added', ...(role ? { role } : {}) });
    }
  }

  addMembers(byUserId: string, userIds: string[], role: MemberRole): Promise<Member[] | ApiError> {
    return this.run(async () => {
      const mine = this.role(byUserId);
      if (!mine) return notFound();
      if (this.chat.kind === 'direct') return new ApiError('NOT_ALLOWED', 'direct chats have exactly two members');
      if (mine === 'member') return new ApiError('NOT_ALLOWED', 'only owners and admins add members');
      if (role === 'owner') return new ApiError('NOT_ALLOWED', 'a chat has one owner');
      const fresh = [...new Set(userIds)].filter((id) => !this.members.has(id));
      if (this.members.size + fresh.length > CHAT_LIMITS.groupMembers) return new ApiError('MEMBER_LIMIT_REACHED', `a group has at most ${CHAT_LIMITS.groupMembers} members`);
      for (const id of fresh) if (!(await this.deps.store.users.get(this.appId, id))) return new ApiError('USER_NOT_FOUND', `no user ${id} in this application`);
      const now = this.deps.now().toISOString();
      for (const id of fresh) if (await this.deps.store.moderation.chatBanOf(this.appId, this.chatId, id, now)) return new ApiError('MEMBER_BANNED', `user ${id} is banned from this chat until the ban is lifted or expires`);
      const full = await this.deps.chatCap?.check(this.appId, fresh);
      if (full) return full;
      const joinedAt = this.deps.now().toISOString();
      const added: Member[] = [];
      for (const userId of fresh) {
        const member: Member = { appId: this.appId, chatId: this.chatId, userId, role, joinedAt, readSeq: this.publishedSeq };
        const event = { type: 'member.added', data: { chatId: this.chatId, ...memberView(member) }, check: { kind: 'member' as const, chatId: this.chatId, userId, present: true } };
        await changeWithEvents(this.deps.webhooks, this.appId, [event], (events) => this.deps.store.chats.putMember(member, { ...FENCED, events }), () => true);
        this.members.set(userId, member);
        added.push(member);
        this.deps.events.membershipMoved(this.appId, this.chatId, userId, true);
        this.deps.events.chatEvent(this.appId, { type: 'membership.changed', chatId: this.chatId, userId, change: 'added', role });
      }
      if (added.length > 0) await this.membersCounted();
      return added;
    });
  }

  /** Removes `userId` (by an owner or admin, or the member itself: leaving). */
  removeMember(byUserId: string, userId: string): Promise<true | ApiError> {
    return this.run(async () => {
      const mine = this.role(byUserId);
      if (!mine) return notFound();
      const target = this.members.get(userId);
      if (!target) return new ApiError('USER_NOT_FOUND', 'the user is not a member of this chat');
      if (this.chat.kind === 'direct') return new ApiError('NOT_ALLOWED', 'members cannot leave or be removed from a direct chat; delete it instead');
      if (byUserId !== userId) {
        if (mine === 'member') return new ApiError('NOT_ALLOWED', 'only owners and admins remove members');
        if (target.role === 'owner' || (target.role === 'admin' && mine !== 'owner')) return new ApiError('NOT_ALLOWED', 'you cannot remove this member');
      }
      await this.removeUnchecked(target, byUserId !== userId ? byUserId : undefined);
      return true as const;
    });
  }

  /** Removes a member (the owner's leaving hands the chat on), by `removedBy` when not itself. */
  private async removeUnchecked(target: Member, removedBy: string | undefined): Promise<void> {
    const { userId } = target;
    if (target.role === 'owner' && this.members.size > 1) {
      // The owner leaving hands the chat to the longest-standing admin, else member.
      const heir = [...this.members.values()].filter((m) => m.userId !== userId).sort((a, b) => rank(a.role) - rank(b.role) || a.joinedAt.localeCompare(b.joinedAt))[0]!;
      await this.setRoleUnchecked(heir, 'owner');
    }
    const event = { type: 'member.removed', data: { chatId: this.chatId, userId, ...(removedBy !== undefined ? { removedBy } : {}) }, check: { kind: 'member' as const, chatId: this.chatId, userId, present: false } };
    await changeWithEvents(this.deps.webhooks, this.appId, [event], (events) => this.deps.store.chats.removeMember(this.appId, this.chatId, userId, { ...FENCED, events }), (r) => r === 'removed');
    this.members.delete(userId);
    // Published while the removed member is still subscribed, so it learns of its own removal;
    // unsubscribed at once after, so it receives none of the chat's later events.
    this.deps.events.chatEvent(this.appId, { type: 'membership.changed', chatId: this.chatId, userId, change: 'removed' });
    this.deps.events.membershipMoved(this.appId, this.chatId, userId, false);
    await this.membersCounted();
  }

  /**
   * The member count changed: the chat row carries it for lists read where this actor is not
   * loaded. Written now (a membership change is rare), after any activity write in flight, which
   * carries an older row; not through the activity writer, whose interval would then hold back the
   * chat's next message in chat lists.
   */
  private async membersCounted(): Promise<void> {
    this.chat.memberCount = this.members.size;
    await this.activity.inFlight();
    await this.deps.store.chats.update(this.chat, FENCED);
  }

  // ---- moderation (README, "Moderation"; chat-moderation.ts) ---------------------------------------

  /** A mute, unmute, ban or unban, in this chat's order (see applyModeration). */
  moderate(by: Moderator, change: ChatModeration): Promise<MuteView | ChatBanView | true | ApiError> {
    return this.run(() =>
      applyModeration(
        {
          appId: this.appId,
          chatId: this.chatId,
          kind: this.chat.kind,
          members: this.members,
          deps: this.deps,
          putMember: (m) => this.deps.store.chats.putMember(m, FENCED),
          remove: (target, removedBy) => this.removeUnchecked(target, removedBy),
        },
        by,
        change,
      ),
    );
  }

  /** The members muted now, for the chat's moderators (see mutesOf). */
  mutes(by: Moderator): MuteView[] | ApiError {
    return mutesOf(this.members, by, this.deps.now()) ?? notFound();
  }

  setRole(byUserId: string, userId: string, role: MemberRole): Promise<Member | ApiError> {
    return this.run(async () => {
      if (this.role(byUserId) === undefined) return notFound();
      if (this.role(byUserId) !== 'owner') return new ApiError('NOT_ALLOWED', 'only the owner changes roles');
      const target = this.members.get(userId);
      if (!target) return new ApiError('USER_NOT_FOUND', 'the user is not a member of this chat');
      if (role === 'owner' || target.role === 'owner') return new ApiError('NOT_ALLOWED', 'ownership moves only when the owner leaves');
      return this.setRoleUnchecked(target, role);
    });
  }

  private async setRoleUnchecked(target: Member, role: MemberRole): Promise<Member> {
    const updated = { ...target, role };
    await this.deps.store.chats.putMember(updated, FENCED);
    this.members.set(target.userId, updated);
    this.deps.events.chatEvent(this.appId, { type: 'membership.changed', chatId: this.chatId, userId: target.userId, change: 'role', role });
    return updated;
  }

  rename(byUserId: string, name: string): Promise<Chat | ApiError> {
    return this.run(async () => {
      const mine = this.role(byUserId);
      if (!mine) return notFound();
      if (this.chat.kind === 'direct') return new ApiError('NOT_ALLOWED', 'direct chats have no name');
      if (mine === 'member') return new ApiError('NOT_ALLOWED', 'only owners and admins rename a group');
      this.chat = { ...this.chat, name, updatedAt: this.deps.now().toISOString() };
      // An activity write in flight carries the old name: it must land first, not after this one.
      await this.activity.inFlight();
      const event = { type: 'chat.updated', data: chatView(this.chat), check: { kind: 'chat' as const, chatId: this.chatId, present: true, updatedAt: this.chat.updatedAt } };
      await changeWithEvents(this.deps.webhooks, this.appId, [event], (events) => this.deps.store.chats.update(this.chat, { ...FENCED, events }), (r) => r === 'updated');
      this.deps.events.chatEvent(this.appId, { type: 'chat.updated', chatId: this.chatId, chat: chatView(this.chat) });
      return this.chat;
    });
  }

  deleteChat(byUserId: string): Promise<string[] | ApiError> {
    return this.run(async () => {
      const mine = this.role(byUserId);
      if (!mine) return notFound();
      if (this.chat.kind === 'group' && mine !== 'owner') return new ApiError('NOT_ALLOWED', 'only the owner deletes a group');
      const event = { type: 'chat.deleted', data: { chatId: this.chatId, deletedBy: byUserId }, check: { kind: 'chat' as const, chatId: this.chatId, present: false } };
      await changeWithEvents(this.deps.webhooks, this.appId, [event], (events) => this.deps.store.chats.delete(this.appId, this.chatId, { events }), (r) => r === 'deleted');
      const former = [...this.members.keys()];
      this.deps.events.chatEvent(this.appId, { type: 'chat.deleted', chatId: this.chatId });
      for (const userId of former) this.deps.events.membershipMoved(this.appId, this.chatId, userId, false);
      this.members.clear();
      this.status = 'gone';
      this.activity.stop();
      this.senderReads.stop();
      return former;
    });
  }
}
