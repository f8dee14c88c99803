import { randomUUID } from 'node:crypto';
import { ApiError } from '../../common/index.ts';
import type { Chat, ChatHead, Member, MemberRole, NodeStore, StoredMessage } from '../store/index.ts';
import type { ChatEvent, EventSink } from './events.ts';
import { CHAT_LIMITS } from './limits.ts';
import { chatView, messageView, reactionView, type MessageView } from './views.ts';
import { newMessageId } from './message-id.ts';

export interface ActorDeps {
  store: NodeStore;
  events: EventSink;
  now: () => Date;
  /** Seconds from enqueue to durable, for the ack-latency histogram. */
  observeAck?: (seconds: number) => void;
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

/** A message's current state and the revision of its latest write. */
export interface ChangedMessage {
  rev: number;
  seq: number;
  message: MessageView;
}

interface PendingWrite {
  message: StoredMessage;
  event: ChatEvent;
  enqueuedAt: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** A result that is decided now but delivered when its write is durable. */
class Later<T> {
  constructor(readonly promise: Promise<T>) {}
}
async function settle<T>(result: Promise<T | ApiError | Later<T>>): Promise<T | ApiError> {
  const value = await result;
  return value instanceof Later ? value.promise : value;
}

const notFound = () => new ApiError('CHAT_NOT_FOUND', 'no such chat, or you are not a member');
const noMessage = () => new ApiError('MESSAGE_NOT_FOUND', 'no such message in this chat');

/**
 * The single writer of one chat on this node. Operations run one at a time in arrival order, so
 * seq numbers are assigned without gaps or repeats. Message writes are group-committed: while one
 * batch is being made durable the next one fills, and every operation is acknowledged only after
 * its batch is on disk; events are published after that, in seq order. Membership and recent
 * messages are cached, so a send costs no store read.
 *
 * If a write fails the actor is `broken`: everything pending is refused and the registry replaces
 * it with a fresh actor that reloads the seq from the store, so no seq is ever assigned twice.
 */
export class ChatActor {
  chat!: Chat;
  readonly members = new Map<string, Member>();
  /** Last durable messages by id, least recently written first (Map keeps insertion order). */
  private readonly recent = new Map<string, StoredMessage>();
  /** States of changed messages not yet durable: later changes build on them. */
  private readonly unflushed = new Map<string, StoredMessage>();
  private readonly pendingByKey = new Map<string, Promise<SendResult>>();
  private tail: Promise<unknown> = Promise.resolve();
  private batch: PendingWrite[] = [];
  private writing = false;
  private drainWaiters: (() => void)[] = [];
  /** The chat row's activity: a write in flight, a newer state to write, a timer spacing writes. */
  private activity: { writing?: Promise<void>; dirty: boolean; timer?: NodeJS.Timeout } = { dirty: false };
  /** Highest seq whose event has been published (and so is durable). */
  publishedSeq = 0;
  private assignedSeq = 0;
  /** Highest revision published; every message write (new or changed) takes the next one. */
  publishedRev = 0;
  private assignedRev = 0;
  /** `recent` holds every message written after this revision (it grows as entries are evicted). */
  private cacheCoversAfterRev = 0;
  /**
   * The chat's head in the store as this actor last wrote or read it. Every batch is written with
   * it as a fence: if another node's actor for this chat (two nodes briefly disagreeing about the
   * owner) wrote since, the store refuses the batch and this actor is replaced by one that reloads.
   */
  private head: ChatHead = { seq: 0, rev: 0 };
  broken = false;
  /** The chat was deleted; the registry drops the actor. */
  gone = false;
  lastUsed = Date.now();

  constructor(
    readonly appId: string,
    readonly chatId: string,
    private readonly deps: ActorDeps,
  ) {}

  /** Loads chat, members and the chat's last seq. False when the chat does not exist. */
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
    this.assignedRev = this.publishedRev = this.cacheCoversAfterRev = lastRev;
    this.chat = { ...chat, lastSeq: Math.max(chat.lastSeq, lastSeq) };
    for (const m of members) this.members.set(m.userId, m);
    this.assignedSeq = this.publishedSeq = this.chat.lastSeq;
    for (const m of (await store.messages.pageBackward(this.appId, this.chatId, undefined, CHAT_LIMITS.preloadMessages)).reverse()) this.remember(m);
    return true;
  }

  get idle(): boolean {
    return this.batch.length === 0 && !this.writing && this.pendingByKey.size === 0;
  }

  /** Resolves when every operation queued so far has run and its writes are durable (or failed). */
  async drain(): Promise<void> {
    await this.tail;
    if (this.writing || this.batch.length > 0) await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
    await this.flushActivity();
  }

  isMember(userId: string): boolean {
    return this.members.has(userId);
  }

  /** Runs `op` after every earlier operation of this chat has run (not necessarily been made durable). */
  private run<T>(op: () => T | Promise<T>): Promise<T> {
    this.lastUsed = Date.now();
    const result = this.tail.then(() => {
      if (this.gone) return notFound() as T;
      if (this.broken) return new ApiError('UNAVAILABLE', 'the chat is recovering from a storage failure; retry') as T;
      return op();
    });
    this.tail = result.catch(() => undefined);
    return result;
  }

  // ---- messages -------------------------------------------------------------------------------

  send(userId: string, input: SendInput): Promise<SendResult | ApiError> {
    return settle(this.sendOp(userId, input));
  }

  private sendOp(userId: string, input: SendInput): Promise<SendResult | ApiError | Later<SendResult>> {
    const keyId = input.clientKey === undefined ? undefined : `${userId}\u0000${input.clientKey}`;
    if (keyId !== undefined) {
      const inFlight = this.pendingByKey.get(keyId);
      if (inFlight) return inFlight.then((r) => ({ ...r, created: false }));
    }
    return this.run(async (): Promise<SendResult | ApiError | Later<SendResult>> => {
      if (!this.isMember(userId)) return notFound();
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
      const now = this.deps.now().toISOString();
      const message: StoredMessage = {
        appId: this.appId,
        chatId: this.chatId,
        id: newMessageId(),
        seq: ++this.assignedSeq,
        senderId: userId,
        content: input.content,
        createdAt: now,
        reactions: [],
      };
      if (replyTo) message.replyToId = replyTo.id;
      if (input.clientKey !== undefined) message.clientKey = input.clientKey;
      const view = messageView(message, replyTo);
      // The revision is assigned by enqueue.
      const durable = this.enqueue(message, { type: 'message.new', chatId: this.chatId, seq: message.seq, rev: 0, message: view });
      const result = durable.then(() => ({ message: view, created: true }));
      if (keyId !== undefined) {
        this.pendingByKey.set(keyId, result);
        void result.catch(() => undefined).finally(() => this.pendingByKey.delete(keyId));
      }
      return new Later(result);
    });
  }

  edit(userId: string, messageId: string, content: string): Promise<MessageView | ApiError> {
    return this.change(userId, messageId, (m) => {
      if (m.senderId !== userId) return new ApiError('NOT_ALLOWED', 'only the author can edit a message');
      if (m.deletedAt) return new ApiError('MESSAGE_DELETED', 'a deleted message cannot be edited');
      return { message: { ...m, content, editedAt: this.deps.now().toISOString() }, event: 'message.edited' };
    });
  }

  delete(userId: string, messageId: string): Promise<MessageView | ApiError> {
    return this.change(userId, messageId, (m) => {
      const role = this.members.get(userId)?.role;
      if (m.senderId !== userId && role !== 'owner' && role !== 'admin') return new ApiError('NOT_ALLOWED', 'only the author or a chat admin can delete a message');
      if (m.deletedAt) return { message: m, event: undefined };
      return { message: { ...m, content: '', reactions: [], deletedAt: this.deps.now().toISOString() }, event: 'message.deleted' };
    });
  }

  react(userId: string, messageId: string, reaction: string, add: boolean): Promise<MessageView | ApiError> {
    return this.change(userId, messageId, (m) => {
      if (m.deletedAt) return new ApiError('MESSAGE_DELETED', 'a deleted message takes no reactions');
      const existing = m.reactions.find((r) => r.userId === userId && r.reaction === reaction);
      if (add) {
        if (existing) return { message: m, event: undefined };
        if (new Set(m.reactions.map((r) => r.reaction)).size >= CHAT_LIMITS.reactionsPerMessage && !m.reactions.some((r) => r.reaction === reaction)) {
          return new ApiError('VALIDATION_FAILED', `a message takes at most ${CHAT_LIMITS.reactionsPerMessage} distinct reactions`);
        }
        const added = { reactionId: randomUUID(), userId, reaction, createdAt: this.deps.now().toISOString() };
        return { message: { ...m, reactions: [...m.reactions, added] }, event: 'reaction.added', reaction: added };
      }
      if (!existing) return { message: m, event: undefined };
      return { message: { ...m, reactions: m.reactions.filter((r) => r !== existing) }, event: 'reaction.removed', reaction: existing };
    });
  }

  /**
   * Read-modify-write of one message through the batch. `apply` returns the new state and which
   * event it makes (none for a no-op such as adding a reaction twice).
   */
  private change(
    userId: string,
    messageId: string,
    apply: (
      m: StoredMessage,
    ) => ApiError | { message: StoredMessage; event: 'message.edited' | 'message.deleted' | 'reaction.added' | 'reaction.removed' | undefined; reaction?: StoredMessage['reactions'][number] },
  ): Promise<MessageView | ApiError> {
    return settle(this.run(async (): Promise<MessageView | ApiError | Later<MessageView>> => {
      if (!this.isMember(userId)) return notFound();
      const current = await this.message(messageId);
      if (!current) return noMessage();
      const outcome = apply(current);
      if (outcome instanceof ApiError) return outcome;
      const replyTo = outcome.message.replyToId ? await this.message(outcome.message.replyToId) : undefined;
      const view = messageView(outcome.message, replyTo);
      if (!outcome.event) return view;
      const m = outcome.message;
      // The revision is assigned by enqueue.
      let event: ChatEvent & { rev: number };
      if (outcome.event === 'reaction.added' || outcome.event === 'reaction.removed') {
        event = { type: outcome.event, chatId: this.chatId, seq: m.seq, rev: 0, reaction: reactionView(m, outcome.reaction!) };
      } else {
        event = { type: outcome.event, chatId: this.chatId, seq: m.seq, rev: 0, message: view };
      }
      // Later changes to the same message read this state, even before it is durable.
      this.unflushed.set(m.id, m);
      return new Later(this.enqueue(m, event).then(() => view));
    }));
  }

  private async message(id: string): Promise<StoredMessage | undefined> {
    return this.unflushed.get(id) ?? this.recent.get(id) ?? (await this.deps.store.messages.get(this.appId, this.chatId, id));
  }

  private async view(m: StoredMessage): Promise<MessageView> {
    return messageView(m, m.replyToId ? await this.message(m.replyToId) : undefined);
  }

  /** Messages with seq > `afterSeq` that are published, from memory when the cache covers them. */
  async since(afterSeq: number, limit: number): Promise<{ messages: ChangedMessage[]; upTo: number; complete: boolean }> {
    const upTo = this.publishedSeq;
    const cached = [...this.recent.values()].filter((m) => m.seq > afterSeq && m.seq <= upTo).sort((a, b) => a.seq - b.seq);
    let stored: StoredMessage[];
    if (cached.length > 0 && cached[0]!.seq === afterSeq + 1) stored = cached;
    else stored = (await this.deps.store.messages.afterSeq(this.appId, this.chatId, afterSeq, limit + 1)).filter((m) => m.seq <= upTo);
    const complete = stored.length <= limit;
    const slice = stored.slice(0, limit);
    const messages = await Promise.all(slice.map((m) => this.changed(this.recent.get(m.id) ?? m)));
    return { messages, upTo: complete ? upTo : (slice.at(-1)?.seq ?? afterSeq), complete };
  }

  /**
   * Published messages with seq in (afterSeq, publishedSeq], from memory only and synchronously;
   * undefined when the cache no longer covers that range.
   */
  publishedSince(afterSeq: number): ChangedMessage[] | undefined {
    if (afterSeq >= this.publishedSeq) return [];
    const found = [...this.recent.values()].filter((m) => m.seq > afterSeq && m.seq <= this.publishedSeq).sort((a, b) => a.seq - b.seq);
    if (found.length !== this.publishedSeq - afterSeq) return undefined;
    return found.map((m) => this.changedNow(m));
  }

  /**
   * Messages read earlier (asynchronously), brought to their current state from memory where a
   * newer write has been published since: what a replay sends must be current.
   */
  current(items: ChangedMessage[]): ChangedMessage[] {
    return items.map((item) => {
      const m = this.recent.get(item.message.messageId);
      return m && (m.rev ?? 0) > item.rev ? this.changedNow(m, item.message.replyTo) : item;
    });
  }

  private async changed(m: StoredMessage): Promise<ChangedMessage> {
    return { rev: m.rev ?? 0, seq: m.seq, message: await this.view(m) };
  }

  /** Synchronous: the replied-to message from memory, else as the caller last knew it. */
  private changedNow(m: StoredMessage, knownReplyTo?: MessageView['replyTo']): ChangedMessage {
    const replyTo = m.replyToId ? this.recent.get(m.replyToId) : undefined;
    const message = messageView(m, replyTo);
    if (!replyTo && m.replyToId && knownReplyTo) message.replyTo = knownReplyTo;
    return { rev: m.rev ?? 0, seq: m.seq, message };
  }

  /**
   * Messages written (created or changed) after revision `afterRev` and published, in their current
   * state, in revision order: from memory when the cache covers them, else from the store.
   */
  async changesSince(afterRev: number, limit: number): Promise<{ changes: ChangedMessage[]; upToRev: number; complete: boolean }> {
    const upToRev = this.publishedRev;
    let stored: StoredMessage[];
    if (afterRev >= this.cacheCoversAfterRev) stored = this.cachedChanges(afterRev, upToRev);
    else stored = (await this.deps.store.messages.changedSince(this.appId, this.chatId, afterRev, limit + 1)).filter((m) => (m.rev ?? 0) <= upToRev);
    const complete = stored.length <= limit;
    const slice = stored.slice(0, limit);
    const changes = await Promise.all(slice.map((m) => this.changed(this.recent.get(m.id) ?? m)));
    return { changes, upToRev: complete ? upToRev : (slice.at(-1)?.rev ?? afterRev), complete };
  }

  /** Like `changesSince`, from memory only and synchronously; undefined when the cache no longer covers it. */
  changesPublishedSince(afterRev: number): ChangedMessage[] | undefined {
    if (afterRev < this.cacheCoversAfterRev) return undefined;
    return this.cachedChanges(afterRev, this.publishedRev).map((m) => this.changedNow(m));
  }

  private cachedChanges(afterRev: number, upToRev: number): StoredMessage[] {
    return [...this.recent.values()].filter((m) => (m.rev ?? 0) > afterRev && (m.rev ?? 0) <= upToRev).sort((a, b) => (a.rev ?? 0) - (b.rev ?? 0));
  }

  // ---- group commit -----------------------------------------------------------------------------

  /** Queues a message write; it takes the chat's next revision, which its event carries. */
  private enqueue(message: StoredMessage, event: ChatEvent & { rev: number }): Promise<void> {
    message.rev = event.rev = ++this.assignedRev;
    return new Promise<void>((resolve, reject) => {
      this.batch.push({ message, event, enqueuedAt: performance.now(), resolve, reject });
      if (!this.writing) queueMicrotask(() => this.flush());
    });
  }

  private flush(): void {
    if (this.writing || this.batch.length === 0) return;
    const writes = this.batch.splice(0, CHAT_LIMITS.batchMessages);
    this.writing = true;
    const to = { ...this.head };
    for (const w of writes) {
      to.rev = Math.max(to.rev, w.message.rev ?? 0);
      if (w.event.type === 'message.new') to.seq = Math.max(to.seq, w.message.seq);
    }
    this.deps.store.messages.put(writes.map((w) => w.message), { from: this.head, to }).then(
      () => {
        this.writing = false;
        this.head = to;
        const now = performance.now();
        for (const w of writes) {
          this.remember(w.message);
          if (this.unflushed.get(w.message.id) === w.message) this.unflushed.delete(w.message.id);
          this.publishedRev = Math.max(this.publishedRev, w.message.rev ?? 0);
          if (w.message.seq > this.publishedSeq && w.event.type === 'message.new') {
            this.publishedSeq = w.message.seq;
            this.chat.lastSeq = w.message.seq;
            this.chat.lastActivityAt = w.message.createdAt;
          }
          this.deps.observeAck?.((now - w.enqueuedAt) / 1000);
          w.resolve();
          this.deps.events.chatEvent(this.appId, w.event);
        }
        this.persistChatActivity();
        this.flush();
        this.notifyDrained();
      },
      (error: unknown) => {
        this.writing = false;
        this.broken = true;
        const failed = [...writes, ...this.batch.splice(0)];
        for (const w of failed) w.reject(error);
        this.notifyDrained();
      },
    );
  }

  private notifyDrained(): void {
    if (this.writing || this.batch.length > 0) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /**
   * The chat row's activity fields trail the messages: they order chat lists, and a list read from
   * the store takes the newest message's seq and time where they are ahead. So they are written at
   * most once per `activityWriteMs` and one write at a time (on Cassandra each is a compare-and-set,
   * `IF EXISTS`, so a deleted chat is not brought back), not once per batch.
   */
  private persistChatActivity(): void {
    this.activity.dirty = true;
    if (this.activity.writing || this.activity.timer) return;
    this.writeActivity();
  }

  private writeActivity(): void {
    this.activity.dirty = false;
    const written = this.deps.store.chats.update({ ...this.chat }).then(
      () => undefined,
      () => undefined,
    );
    this.activity.writing = written.then(() => {
      this.activity.writing = undefined;
      if (!this.activity.dirty) return;
      this.activity.timer = setTimeout(() => {
        this.activity.timer = undefined;
        if (this.activity.dirty && !this.gone) this.writeActivity();
      }, CHAT_LIMITS.activityWriteMs);
      this.activity.timer.unref();
    });
  }

  /** Writes the latest activity now (instead of when the timer fires) and waits for it. */
  private async flushActivity(): Promise<void> {
    await this.activity.writing;
    if (this.activity.timer) {
      clearTimeout(this.activity.timer);
      this.activity.timer = undefined;
    }
    if (this.activity.dirty && !this.gone) this.writeActivity();
    await this.activity.writing;
  }

  private remember(m: StoredMessage): void {
    this.recent.delete(m.id);
    this.recent.set(m.id, m);
    if (this.recent.size > CHAT_LIMITS.recentMessages) {
      const [oldestId, oldest] = this.recent.entries().next().value ?? [];
      if (oldestId === undefined) return;
      this.recent.delete(oldestId);
      this.cacheCoversAfterRev = Math.max(this.cacheCoversAfterRev, oldest?.rev ?? 0);
    }
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
    this.deps.events.chatEvent(this.appId, { type: started ? 'typing.started' : 'typing.stopped', chatId: this.chatId, userId });
    return undefined;
  }

  /** The newest published message (a tombstone counts), if the cache has it. */
  lastMessage(): MessageView | undefined {
    let newest: StoredMessage | undefined;
    for (const m of this.recent.values()) if (m.seq <= this.publishedSeq && (!newest || m.seq > newest.seq)) newest = m;
    return newest && messageView(newest, newest.replyToId ? this.recent.get(newest.replyToId) : undefined);
  }

  /** Moves the live connections of a new chat's members into its topic and tells them. */
  announceMembers(userIds: string[]): void {
    for (const userId of userIds) this.deps.events.membershipMoved(this.appId, this.chatId, userId, true);
    for (const userId of userIds) {
      const role = this.members.get(userId)?.role;
      this.deps.events.chatEvent(this.appId, { type: 'membership.changed', chatId: this.chatId, userId, change: 'added', ...(role ? { role } : {}) });
    }
  }

  role(userId: string): MemberRole | undefined {
    return this.members.get(userId)?.role;
  }

  addMembers(actorId: string, userIds: string[], role: MemberRole): Promise<Member[] | ApiError> {
    return this.run(async () => {
      const mine = this.role(actorId);
      if (!mine) return notFound();
      if (this.chat.kind === 'direct') return new ApiError('NOT_ALLOWED', 'direct chats have exactly two members');
      if (mine === 'member') return new ApiError('NOT_ALLOWED', 'only owners and admins add members');
      if (role === 'owner') return new ApiError('NOT_ALLOWED', 'a chat has one owner');
      const fresh = [...new Set(userIds)].filter((id) => !this.members.has(id));
      if (this.members.size + fresh.length > CHAT_LIMITS.groupMembers) return new ApiError('MEMBER_LIMIT_REACHED', `a group has at most ${CHAT_LIMITS.groupMembers} members`);
      for (const id of fresh) if (!(await this.deps.store.users.get(this.appId, id))) return new ApiError('USER_NOT_FOUND', `no user ${id} in this application`);
      const joinedAt = this.deps.now().toISOString();
      const added: Member[] = [];
      for (const userId of fresh) {
        const member: Member = { appId: this.appId, chatId: this.chatId, userId, role, joinedAt, readSeq: this.publishedSeq };
        await this.deps.store.chats.putMember(member);
        this.members.set(userId, member);
        added.push(member);
        this.deps.events.membershipMoved(this.appId, this.chatId, userId, true);
        this.deps.events.chatEvent(this.appId, { type: 'membership.changed', chatId: this.chatId, userId, change: 'added', role });
      }
      return added;
    });
  }

  /** Removes `userId` (by an owner or admin, or the member itself: leaving). */
  removeMember(actorId: string, userId: string): Promise<true | ApiError> {
    return this.run(async () => {
      const mine = this.role(actorId);
      if (!mine) return notFound();
      const target = this.members.get(userId);
      if (!target) return new ApiError('USER_NOT_FOUND', 'the user is not a member of this chat');
      if (this.chat.kind === 'direct') return new ApiError('NOT_ALLOWED', 'members cannot leave or be removed from a direct chat; delete it instead');
      if (actorId !== userId) {
        if (mine === 'member') return new ApiError('NOT_ALLOWED', 'only owners and admins remove members');
        if (target.role === 'owner' || (target.role === 'admin' && mine !== 'owner')) return new ApiError('NOT_ALLOWED', 'you cannot remove this member');
      }
      if (target.role === 'owner' && this.members.size > 1) {
        // The owner leaving hands the chat to the longest-standing admin, else member.
        const heir = [...this.members.values()].filter((m) => m.userId !== userId).sort((a, b) => rank(a.role) - rank(b.role) || a.joinedAt.localeCompare(b.joinedAt))[0]!;
        await this.setRoleUnchecked(heir, 'owner');
      }
      await this.deps.store.chats.removeMember(this.appId, this.chatId, userId);
      this.members.delete(userId);
      // Published while the removed member is still subscribed, so it learns of its own removal;
      // unsubscribed at once after, so it receives none of the chat's later events.
      this.deps.events.chatEvent(this.appId, { type: 'membership.changed', chatId: this.chatId, userId, change: 'removed' });
      this.deps.events.membershipMoved(this.appId, this.chatId, userId, false);
      return true;
    });
  }

  setRole(actorId: string, userId: string, role: MemberRole): Promise<Member | ApiError> {
    return this.run(async () => {
      if (this.role(actorId) === undefined) return notFound();
      if (this.role(actorId) !== 'owner') return new ApiError('NOT_ALLOWED', 'only the owner changes roles');
      const target = this.members.get(userId);
      if (!target) return new ApiError('USER_NOT_FOUND', 'the user is not a member of this chat');
      if (role === 'owner' || target.role === 'owner') return new ApiError('NOT_ALLOWED', 'ownership moves only when the owner leaves');
      return this.setRoleUnchecked(target, role);
    });
  }

  private async setRoleUnchecked(target: Member, role: MemberRole): Promise<Member> {
    const updated = { ...target, role };
    await this.deps.store.chats.putMember(updated);
    this.members.set(target.userId, updated);
    this.deps.events.chatEvent(this.appId, { type: 'membership.changed', chatId: this.chatId, userId: target.userId, change: 'role', role });
    return updated;
  }

  rename(actorId: string, name: string): Promise<Chat | ApiError> {
    return this.run(async () => {
      const mine = this.role(actorId);
      if (!mine) return notFound();
      if (this.chat.kind === 'direct') return new ApiError('NOT_ALLOWED', 'direct chats have no name');
      if (mine === 'member') return new ApiError('NOT_ALLOWED', 'only owners and admins rename a group');
      this.chat = { ...this.chat, name, updatedAt: this.deps.now().toISOString() };
      // An activity write in flight carries the old name: it must land first, not after this one.
      await this.activity.writing;
      await this.deps.store.chats.update(this.chat);
      this.deps.events.chatEvent(this.appId, { type: 'chat.updated', chatId: this.chatId, chat: chatView(this.chat) });
      return this.chat;
    });
  }

  remove(actorId: string): Promise<string[] | ApiError> {
    return this.run(async () => {
      const mine = this.role(actorId);
      if (!mine) return notFound();
      if (this.chat.kind === 'group' && mine !== 'owner') return new ApiError('NOT_ALLOWED', 'only the owner deletes a group');
      await this.deps.store.chats.delete(this.appId, this.chatId);
      const former = [...this.members.keys()];
      this.deps.events.chatEvent(this.appId, { type: 'chat.deleted', chatId: this.chatId });
      for (const userId of former) this.deps.events.membershipMoved(this.appId, this.chatId, userId, false);
      this.members.clear();
      this.gone = true;
      return former;
    });
  }
}

const rank = (role: MemberRole) => (role === 'owner' ? 0 : role === 'admin' ? 1 : 2);
