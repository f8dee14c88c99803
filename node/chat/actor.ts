import { ApiError } from '../../common/index.ts';
import { FencedError, newMessageId, type Chat, type ChatHead, type Member, type MemberRole, type NodeStore, type StoredMessage, type StoredPin } from '../store/index.ts';
import { ChatRowWrites } from './chat-row-writes.ts';
import { ThreadReplies } from './thread-replies.ts';
import { mentionRefusal, senderRefusal, type SendCheckHost } from './send-checks.ts';
import type { AttachmentPort } from './attachment-port.ts';
import { boundedQueue, type AdmissionPolicy } from './admission.ts';
import { ChatActivity } from './chat-activity.ts';
import { ListMoves } from './list-moves.ts';
import type { ChatCap } from './chat-cap.ts';
import type { ChatEvent, EventSink } from './events.ts';
import { GroupCommit } from './group-commit.ts';
import { CHAT_LIMITS } from './limits.ts';
import { MessageCache } from './message-cache.ts';
import { deleted, edited, moderated, reacted, type Change } from './message-changes.ts';
import { MessageReads } from './message-reads.ts';
import { messageJson } from './message-json.ts';
import { SenderReads } from './sender-reads.ts';
import { SendAttachments } from './send-attachments.ts';
import { SendKeys } from './send-keys.ts';
import { SerialQueue } from './serial-queue.ts';
import type { ChatChange, EditInput, SendInput } from './send-input.ts';

export type { SendInput } from './send-input.ts';
import { ownReactions } from './reaction-summary.ts';
import { messageView, reactionView, type MessageView } from './views.ts';
import { ChatMembership, FENCED, notFound } from './chat-membership.ts';
import { changeWithEvents, type ChatWebhooks } from './change-events.ts';
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
  /** Least time between two moves of a chat in its members' lists (list-moves.ts); CHAT_LIMITS.listMoveMs by default. */
  listMoveMs?: number;
  /** How many chats a user may be in; unbounded when absent. */
  chatCap?: ChatCap;
  /** Webhook events of the chat's writes (none when absent). */
  webhooks?: ChatWebhooks;
  /** Whether the two users of a direct chat block each other (a send's refusal); nobody blocks when absent. */
  blocks?: { refusal(appId: string, userId: string, otherId: string): ApiError | undefined | Promise<ApiError | undefined> };
  /** Attachments (see attachment-port.ts); a send naming any is refused with UNAVAILABLE when absent. */
  attachments?: AttachmentPort;
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

const noMessage = () => new ApiError('MESSAGE_NOT_FOUND', 'no such message in this chat');

/**
 * The single writer of one chat on this node, built from its mechanisms: a serial queue (one
 * operation at a time, in arrival order, so seqs are assigned without gaps or repeats), a group
 * commit (message writes batched, one batch in flight; each operation acknowledged only once its
 * batch is durable, its event published after that, in seq order), a message cache, and the chat
 * row's activity writer. Membership is cached, so a send costs no store read. What each write may
 * do is decided apart: the rules of a change to a message in message-changes.ts, membership in
 * chat-membership.ts, mutes and bans in chat-moderation.ts; the actor orders and stores them.
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
  /** When an activity write also moves the chat in its members' lists. */
  private readonly listMoves: ListMoves;
  /** Moves each sender's read mark to its own messages, written behind (sender-reads.ts). */
  private readonly senderReads: SenderReads;
  /** Who joins, leaves and holds which role (chat-membership.ts). */
  private readonly membership: ChatMembership;
  /** The chat row's own changes: name, data, pins (chat-row-writes.ts). */
  private readonly rows: ChatRowWrites;
  /** What a send's checks read (send-checks.ts). */
  private readonly sendChecks: SendCheckHost;
  /** Replies in the chat's threads, and who follows them (thread-replies.ts). */
  readonly threads: ThreadReplies;
  /** The activity time the members' chat lists were last moved to (the stored row's, at load). */
  private indexedAt: string | undefined;
  private readonly admission: AdmissionPolicy;
  /** The idempotency keys of sends being written and recently stored (send-keys.ts). */
  private readonly keys: SendKeys<SendResult>;
  private readonly files: SendAttachments;
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
    this.files = new SendAttachments(appId, chatId, deps.store.messages, deps.attachments);
    this.keys = new SendKeys(CHAT_LIMITS.recentKeys, {
      lookup: async (userId, clientKey) => {
        // A write of this chat whose outcome was unknown is made definite first (ChatWriters.settle).
        await deps.store.writers.settle(appId, chatId);
        return deps.store.messages.byClientKey(appId, chatId, userId, clientKey);
      },
      message: (id) => this.message(id),
    });
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
    });
    // A broken actor (replaced after a failed or fenced write) writes nothing more of its own.
    this.listMoves = new ListMoves(deps.listMoveMs ?? CHAT_LIMITS.listMoveMs, () => this.status === 'live' && this.activity.touch());
    this.activity = new ChatActivity(async () => {
      const chat = { ...this.chat };
      const move = chat.lastActivityAt !== this.indexedAt && this.listMoves.due();
      try {
        await deps.store.chats.writeActivity(chat, move ? [...this.members.keys()] : [], this.indexedAt);
      } catch (error) {
        if (move) this.listMoves.failed();
        throw error;
      }
      if (move) this.indexedAt = chat.lastActivityAt;
    }, CHAT_LIMITS.activityWriteMs);
    this.senderReads = new SenderReads({ appId, chatId, store: deps.store, members: this.members, run: (op) => this.run(op) }, CHAT_LIMITS.activityWriteMs);
    this.sendChecks = { appId, members: this.members, kind: () => this.chat.kind, now: deps.now, ...(deps.blocks ? { blocks: deps.blocks } : {}) };
    this.threads = new ThreadReplies({
      appId,
      chatId,
      deps,
      message: (id) => this.message(id),
      publishedSeq: () => this.publishedSeq,
      nextSeq: () => this.assignedSeq + 1,
      files: this.files,
      run: (op) => this.run(op),
      writeInChat: (message, event) => {
        // Later changes to the message read this state, even before it is durable.
        this.cache.pending(message);
        return this.enqueue(message, event);
      },
      appendToChat: (make) => {
        const { message, event } = make(++this.assignedSeq);
        return this.enqueue(message, event);
      },
    });
    this.rows = new ChatRowWrites({
      appId,
      chatId,
      deps,
      chat: () => this.chat,
      setChat: (chat) => (this.chat = chat),
      role: (userId) => this.role(userId),
      message: (id) => this.message(id),
      activityInFlight: () => this.activity.inFlight(),
    });
    this.membership = new ChatMembership({
      appId,
      chatId,
      members: this.members,
      deps,
      chat: () => this.chat,
      publishedSeq: () => this.publishedSeq,
      activityInFlight: () => this.activity.inFlight(),
      left: (userId) => this.threads.memberLeft(userId),
    });
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
    return !this.commit.busy && this.queue.length === 0 && this.keys.writing === 0;
  }

  /** Resolves when every operation queued so far has run and its writes are durable (or failed). */
  async drain(): Promise<void> {
    await this.queue.idle();
    await this.commit.drained();
    // The lists move with this last write, paced or not: the next owner takes them to agree with the row.
    if (this.chat.lastActivityAt !== this.indexedAt) {
      this.listMoves.forceNext();
      this.activity.touch();
    }
    await this.activity.flush();
    // A drained actor is dropped (evicted, or its node stops): no later write of its own.
    this.listMoves.stop();
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
    if (input.parentId !== undefined) return this.reply(userId, input.parentId, input);
    const { clientKey } = input;
    const inFlight = clientKey === undefined ? undefined : this.keys.inFlight(userId, clientKey);
    if (inFlight) return inFlight.then((r) => ({ ...r, created: false }));
    const refused = this.admit();
    if (refused) return Promise.resolve(refused);
    // Looked up in the store while the operations ahead of this send run (send-keys.ts).
    const lookup = clientKey === undefined ? undefined : this.keys.prefetch(userId, clientKey, this.assignedSeq);
    return settle(this.run(async (): Promise<SendResult | ApiError | Later<SendResult>> => {
      const refusedSender = await senderRefusal(this.sendChecks, userId);
      if (refusedSender) return refusedSender;
      if (clientKey !== undefined) {
        // A duplicate queued behind the original finds it still being written, or stored.
        const earlier = await this.keys.earlier(userId, clientKey, lookup);
        if (earlier && 'pending' in earlier) return new Later(earlier.pending.then((r) => ({ ...r, created: false })));
        if (earlier) return { message: await this.view(earlier.stored), created: false };
      }
      const outsider = mentionRefusal(this.members, input.mentions);
      if (outsider) return outsider;
      let replyTo: StoredMessage | undefined;
      if (input.replyTo !== undefined) {
        replyTo = await this.message(input.replyTo);
        if (!replyTo) return new ApiError('MESSAGE_NOT_FOUND', 'replyTo names no message of this chat');
      }
      const seq = ++this.assignedSeq;
      const message: StoredMessage = { appId: this.appId, chatId: this.chatId, id: newMessageId(seq), seq, senderId: userId, content: input.content, createdAt: this.deps.now().toISOString(), reactions: [] };
      if (input.attachments?.length) {
        // Claimed in the chat's queue, so no two sends take one file; nothing else takes a seq
        // meanwhile, so a refusal gives this one back and the chat's seqs keep no gap.
        const files = await this.files.claim(userId, message.id, input.attachments).catch((error: unknown) => {
          this.assignedSeq--;
          throw error;
        });
        if (files instanceof ApiError) {
          this.assignedSeq--;
          return files;
        }
        message.attachments = files;
      }
      if (replyTo) message.replyToId = replyTo.id;
      if (clientKey !== undefined) message.clientKey = clientKey;
      if (input.data !== undefined) message.data = input.data;
      if (input.mentions?.length) message.mentions = [...input.mentions];
      if (input.system) message.type = 'system';
      const view = messageView(message, replyTo);
      const durable = this.enqueue(message, { type: 'message.new', chatId: this.chatId, seq, rev: 0, message: view });
      if (message.attachments) this.files.settled(durable, message.attachments);
      const result = durable.then(() => ({ message: view, created: true }));
      if (clientKey !== undefined) this.keys.writingNow(userId, clientKey, result);
      return new Later(result);
    }));
  }


  /** A reply in a message's thread (thread-replies.ts): the sender's checks of a send, then its two writes. */
  private reply(userId: string, parentId: string, input: SendInput): Promise<SendResult | ApiError> {
    const refused = this.admit();
    if (refused) return Promise.resolve(refused);
    return settle(this.run(async (): Promise<SendResult | ApiError | Later<SendResult>> => {
      const refusedSender = await senderRefusal(this.sendChecks, userId);
      if (refusedSender) return refusedSender;
      const outsider = mentionRefusal(this.members, input.mentions);
      if (outsider) return outsider;
      const result = await this.threads.reply(userId, parentId, input);
      return result instanceof ApiError ? result : new Later(result.done);
    }));
  }

  edit(userId: string, messageId: string, change: EditInput): Promise<MessageView | ApiError> {
    return this.change(userId, messageId, true, (m) => edited(m, userId, change, this.deps.now().toISOString()));
  }

  deleteMessage(userId: string, messageId: string): Promise<MessageView | ApiError> {
    return this.change(userId, messageId, false, (m) => deleted(m, userId, this.role(userId), this.deps.now().toISOString()));
  }

  react(userId: string, messageId: string, reaction: string, add: boolean): Promise<MessageView | ApiError> {
    return this.change(userId, messageId, true, (m) => reacted(m, userId, reaction, add, this.deps.now().toISOString()));
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
      const current = (await this.message(messageId)) ?? (await this.threads.find(messageId));
      if (!current) return noMessage();
      const outcome = apply(current);
      if (outcome instanceof ApiError) return outcome;
      const m = outcome.message;
      const view = await this.view(m);
      // The changer's answer also says which values it reacted with; the event, shared, does not.
      const answer: MessageView = userId === undefined ? view : { ...view, ownReactions: ownReactions(m, userId) };
      if (!outcome.event) return answer;
      if (outcome.event === 'message.deleted' && m.attachments?.length && this.deps.attachments) {
        await this.deps.attachments.messageDeleting(this.appId, this.chatId, m.id, m.attachments.map((a) => a.id));
      }
      // A message of the chat's log (not a reply only in its thread) may be pinned.
      if (outcome.event === 'message.deleted' && m.chatId === this.chatId) await this.rows.messageDeleted(m.id);
      const event: ChatEvent & { rev: number } =
        outcome.event === 'reaction.added' || outcome.event === 'reaction.removed'
          ? { type: outcome.event, chatId: this.chatId, seq: m.seq, rev: 0, reaction: reactionView(m, outcome.reaction!) }
          : { type: outcome.event, chatId: this.chatId, seq: m.seq, rev: 0, message: view };
      if (m.parentId !== undefined) {
        // A reply: written in its thread's log, after its parent (thread-replies.ts).
        const written = await this.threads.change(m, event);
        return written instanceof ApiError ? written : new Later(written.done.then(() => answer));
      }
      // Later changes to the same message read this state, even before it is durable.
      this.cache.pending(m);
      return new Later(this.enqueue(m, event).then(() => answer));
    }));
  }

  /**
   * A review's change of a message (README, "Moderation"): hidden pending review (enough flags),
   * restored (dismissed), or deleted. Not a member's write: no membership, role or mute applies.
   */
  moderateMessage(messageId: string, outcome: 'hide' | 'restore' | 'delete'): Promise<MessageView | ApiError> {
    return this.change(undefined, messageId, false, (m) => moderated(m, outcome, this.deps.now().toISOString()));
  }

  /** A message of this chat or a reply in one of its threads, from memory when recent, else from the store. */
  async messageOf(id: string): Promise<StoredMessage | undefined> {
    return (await this.message(id)) ?? (await this.threads.find(id));
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
        this.keys.stored(w.message);
        this.senderReads.sent(w.message.senderId, w.message.seq);
      }
      this.deps.observeAck?.((now - w.enqueuedAt) / 1000);
      this.deps.events.chatEvent(this.appId, w.event, 'message' in w.event ? messageJson(w.event.message) : undefined);
    }
    if (stored > 0) this.deps.messagesStored?.(this.appId, stored);
    if (stored > 0 && this.deps.webhooks) {
      const views = batch.flatMap((w) => (w.event.type === 'message.new' ? [w.event.message] : []));
      this.deps.webhooks.stored(this.appId, this.chatId, views, this.members);
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
    this.membership.announce(userIds);
  }

  addMembers(byUserId: string, userIds: string[], role: MemberRole): Promise<Member[] | ApiError> {
    return this.run(() => this.membership.add(byUserId, userIds, role));
  }

  /** Removes `userId` (by an owner or admin, or the member itself: leaving). */
  removeMember(byUserId: string, userId: string): Promise<true | ApiError> {
    return this.run(() => this.membership.remove(byUserId, userId));
  }

  setRole(byUserId: string, userId: string, role: MemberRole): Promise<Member | ApiError> {
    return this.run(() => this.membership.setRole(byUserId, userId, role));
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
          remove: (target, removedBy) => this.membership.removeUnchecked(target, removedBy),
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

  /** A group's new name, a chat's new data, or both (chat-row-writes.ts). */
  rename(byUserId: string, change: ChatChange): Promise<Chat | ApiError> {
    return this.run(() => this.rows.rename(byUserId, change));
  }

  /** Pins or unpins a message (chat-row-writes.ts): the pin (made, or already there), or `null` for an unpin. */
  pin(byUserId: string, messageId: string, add: boolean): Promise<StoredPin | null | ApiError> {
    return this.run(() => this.rows.pin(byUserId, messageId, add));
  }

  deleteChat(byUserId: string): Promise<string[] | ApiError> {
    return this.run(async () => {
      const mine = this.role(byUserId);
      if (!mine) return notFound();
      if (this.chat.kind === 'group' && mine !== 'owner') return new ApiError('NOT_ALLOWED', 'only the owner deletes a group');
      await this.deps.attachments?.chatDeleting(this.appId, this.chatId);
      const event = { type: 'chat.deleted', data: { chatId: this.chatId, deletedBy: byUserId }, check: { kind: 'chat' as const, chatId: this.chatId, present: false } };
      await changeWithEvents(this.deps.webhooks, this.appId, [event], (events) => this.deps.store.chats.delete(this.appId, this.chatId, { events }), (r) => r === 'deleted');
      const former = [...this.members.keys()];
      this.deps.events.chatEvent(this.appId, { type: 'chat.deleted', chatId: this.chatId });
      for (const userId of former) this.deps.events.membershipMoved(this.appId, this.chatId, userId, false);
      this.members.clear();
      this.status = 'gone';
      this.activity.stop();
      this.listMoves.stop();
      this.senderReads.stop();
      return former;
    });
  }
}
