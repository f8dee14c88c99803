import { ApiError } from '../../common/index.ts';
import { newMessageId, storedReply, threadLogId, uuidv7Time, type NodeStore, type StoredMessage, type ThreadSummary } from '../store/index.ts';
import type { ChatWebhooks } from './change-events.ts';
import type { ChatEvent, EventSink } from './events.ts';
import { messageJson } from './message-json.ts';
import type { SendInput } from './send-input.ts';
import type { SendAttachments } from './send-attachments.ts';
import { messageView, type MessageView } from './views.ts';
import { activityOf, ThreadFollows, type ThreadState } from './thread-follows.ts';

/** Participants a thread's summary names. */
const PARTICIPANTS = 5;
/** Replies a chat's actor keeps in memory for their next changes. */
const RECENT_REPLIES = 256;

/** What a thread's replies use of their chat's actor. */
export interface ReplyHost {
  readonly appId: string;
  readonly chatId: string;
  readonly deps: { store: NodeStore; events: EventSink; now: () => Date; webhooks?: ChatWebhooks };
  /** A message of the chat's own log (memory, else the store). */
  message(id: string): Promise<StoredMessage | undefined>;
  /** The highest seq published in the chat: a parent must be among them. */
  publishedSeq(): number;
  /** The seq the chat's next message takes (nothing else takes one during an operation of its queue). */
  nextSeq(): number;
  /** The chat's files of messages being written: a reply's are claimed there, as a send's. */
  readonly files: SendAttachments;
  /** Runs `op` in the chat's serial queue. */
  run<T>(op: () => T | Promise<T>): Promise<T | ApiError>;
  /**
   * Writes a message of the chat's log (a parent's new state, the chat's copy of a reply shown in
   * the chat) through the chat's group commit: fenced, taking the chat's next revision, which it
   * sets on the message, with its event; resolves once durable.
   */
  writeInChat(message: StoredMessage, event: ChatEvent & { rev: number }): Promise<void>;
  /** A new message of the chat's log with the chat's next seq, as `make` builds it, written as a send is. */
  appendToChat(make: (seq: number) => { message: StoredMessage; event: ChatEvent & { rev: number } }): Promise<void>;
}

/** A reply written, or the one an idempotency key found. */
export interface ReplyResult {
  message: MessageView;
  created: boolean;
}

/**
 * Replies to a chat's messages (README, "Threads"). A reply is written in two steps, in this order:
 *
 * 1. its parent's new summary (the thread's next seq, the count, the time, the participants),
 *    through the chat's group commit: fenced, so a node that no longer writes the chat writes
 *    nothing; the reply takes the revision of that write;
 * 2. the reply itself, in the thread's log (thread-log.ts), unfenced, with its webhook events.
 *
 * Numbers are never given twice: a later writer of the chat numbers from the parent it reads,
 * which counts every reply whose first step was stored. A failure between the steps leaves that
 * number unused (a gap in the thread, as a failed fenced put leaves in a chat). Replies are written
 * and announced (`thread.reply`) in the order they were numbered: one reply write at a time.
 */
export class ThreadReplies {
  private chain: Promise<unknown> = Promise.resolve();
  /** Keyed replies being written: a retry of one waits for it (key: sender, parent, idempotency key). */
  private readonly writing = new Map<string, Promise<ReplyResult>>();
  /** Replies written or being written whose event is not announced yet (see replayOf). */
  private readonly unannounced = new Set<string>();
  /** The latest announcements of replies, numbered (see replayOf). */
  private readonly announced: { n: number; reply: StoredMessage }[] = [];
  private announcements = 0;
  /** The newest reply id made here, by parent (at most RECENT_REPLIES parents): see replyId. */
  private readonly lastIds = new Map<string, string>();
  /** Replies written or being written lately, in their newest state, by id: what a change reads first. */
  private readonly recent = new Map<string, StoredMessage>();

  /** Who follows the chat's threads; written in this class's chain only, so one write at a time. */
  private readonly follows: ThreadFollows;

  constructor(private readonly host: ReplyHost) {
    this.follows = new ThreadFollows(host.deps.store, host.appId, host.chatId);
  }

  /**
   * A reply to `parentId` by `userId` (whose right to send the actor checked): runs in the chat's
   * serial queue and resolves once the reply is numbered, with `done`, which resolves once it is
   * durable (so the queue goes on meanwhile).
   */
  async reply(userId: string, parentId: string, input: SendInput): Promise<ApiError | { done: Promise<ReplyResult> }> {
    const { appId, chatId, deps } = this.host;
    const log = threadLogId(chatId, parentId);
    const key = input.clientKey === undefined ? undefined : `${userId}\u0000${parentId}\u0000${input.clientKey}`;
    const pending = key === undefined ? undefined : this.writing.get(key);
    if (pending) return { done: pending.then((r) => ({ ...r, created: false })) };
    const parent = await this.host.message(parentId);
    if (!parent || parent.seq > this.host.publishedSeq()) return field('/parentId', 'names no message of this chat', 'MESSAGE_NOT_FOUND');
    if (parent.parentId !== undefined) return field('/parentId', 'names a reply: threads do not nest', 'VALIDATION_FAILED');
    if (parent.deletedAt !== undefined) return field('/parentId', 'names a deleted message', 'MESSAGE_DELETED');
    if (input.clientKey !== undefined) {
      const stored = await deps.store.messages.byClientKey(appId, log, userId, input.clientKey);
      if (stored) return { done: Promise.resolve({ message: messageView(stored, undefined), created: false }) };
    }
    // The reply's id first (see replyId): its files are claimed for it, in the chat's queue as a
    // send's are, before anything is written. One shown in the chat carries the chat's next seq,
    // which nothing else takes before appendToChat below (the queue runs this operation alone).
    const id = this.replyId(parentId, input.showInChat ? this.host.nextSeq() : parent.seq);
    const files = input.attachments?.length ? await this.host.files.claim(userId, id, input.attachments) : undefined;
    if (files instanceof ApiError) return files;
    const now = deps.now().toISOString();
    const before: ThreadSummary = parent.thread ?? { lastSeq: 0, replyCount: 0, lastReplyAt: now, participants: [] };
    const seq = before.lastSeq + 1;
    const participants = before.participants.includes(userId) || before.participants.length >= PARTICIPANTS ? before.participants : [...before.participants, userId];
    const thread: ThreadSummary = { lastSeq: seq, replyCount: before.replyCount + 1, lastReplyAt: now, participants };
    const nextParent: StoredMessage = { ...parent, thread };
    const summary = { replyCount: thread.replyCount, lastReplyAt: thread.lastReplyAt, participants: thread.participants };
    const parentWritten = this.host.writeInChat(nextParent, { type: 'thread.updated', chatId, seq: parent.seq, rev: 0, parentId, thread: summary });
    // The reply's id carries its parent's seq, so the id alone leads to its thread (thread-log.ts);
    // one shown in the chat too carries its seq in the chat, where it is found first.
    const reply: StoredMessage = { appId, chatId: log, id, seq, senderId: userId, content: input.content, createdAt: now, reactions: [], parentId };
    if (files) reply.attachments = files;
    if (input.data !== undefined) reply.data = input.data;
    if (input.mentions?.length) reply.mentions = [...input.mentions];
    if (input.system) reply.type = 'system';
    let inChat: Promise<void> | undefined;
    let copy: StoredMessage | undefined;
    if (input.showInChat) {
      // The chat's copy: a message of the chat with its own seq, written as a send is (its event
      // `message.new` and its webhooks are the reply's in the chat). The thread's copy follows.
      inChat = this.host.appendToChat((chatSeq) => {
        reply.copySeq = chatSeq;
        const { clientKey: _key, ...fields } = reply;
        copy = { ...fields, chatId, seq: chatSeq, copySeq: seq };
        return { message: copy, event: { type: 'message.new', chatId, seq: chatSeq, rev: 0, message: messageView(copy, undefined) } };
      });
    }
    if (input.clientKey !== undefined) reply.clientKey = input.clientKey;
    this.remember(reply);
    this.unannounced.add(reply.id);
    const result = this.after(inChat ? Promise.all([parentWritten, inChat]).then(() => undefined) : parentWritten, async () => {
      // The reply takes the revision of the last write before it (the chat's copy, when there is
      // one): a client resumes before it until it has seen the reply's own event.
      reply.rev = Math.max(nextParent.rev ?? 0, copy?.rev ?? 0);
      const followers = await this.follows.replied(nextParent, reply, activityOf(parent));
      const view = messageView(reply, undefined);
      const event = { type: 'thread.reply' as const, chatId, parentId, seq, rev: reply.rev ?? 0, message: view };
      await this.write(reply, inChat ? undefined : { type: 'message.new', chatId, seq, rev: event.rev, message: view });
      this.announce(reply, followers, event, messageJson(view));
      return { message: view, created: true };
    });
    void result.catch(() => this.unannounced.delete(reply.id));
    if (files) this.host.files.settled(result, files);
    if (key !== undefined) {
      this.writing.set(key, result);
      void result.finally(() => this.writing.delete(key)).catch(() => undefined);
    }
    return { done: result };
  }

  /**
   * A reply of this chat by its id, or undefined: from memory when recent, else found through its
   * parent, whose seq the id carries (thread-log.ts): one read of the parent, one of the reply.
   */
  async find(id: string): Promise<StoredMessage | undefined> {
    const known = this.recent.get(id);
    if (known) return known;
    return storedReply(this.host.deps.store.messages, this.host.appId, this.host.chatId, id);
  }

  /**
   * A reply's change (an edit, a delete, a reaction), in the chat's serial queue: its parent is
   * written again first, fenced, with its summary as it is (so the change takes a revision of the
   * chat, and a node that no longer writes the chat writes nothing), then the reply in its thread's
   * log; `event` is announced once both are durable. Resolves with `done` at once.
   */
  async change(reply: StoredMessage, event: ChatEvent & { rev: number }): Promise<ApiError | { done: Promise<void> }> {
    if (reply.chatId === this.host.chatId) return { done: this.changeShownInChat(reply, event) };
    const parent = reply.parentId === undefined ? undefined : await this.host.message(reply.parentId);
    if (!parent?.thread) return new ApiError('MESSAGE_NOT_FOUND', 'no such message in this chat');
    const { appId, chatId, deps } = this.host;
    const touched: StoredMessage = { ...parent };
    const summary = { replyCount: parent.thread.replyCount, lastReplyAt: parent.thread.lastReplyAt, participants: parent.thread.participants };
    const parentWritten = this.host.writeInChat(touched, { type: 'thread.updated', chatId, seq: parent.seq, rev: 0, parentId: parent.id, thread: summary });
    this.remember(reply);
    this.unannounced.add(reply.id);
    const done = this.after(parentWritten, async () => {
      reply.rev = event.rev = touched.rev ?? 0;
      const [followers] = await Promise.all([this.follows.followers(parent.id), this.write(reply, event)]);
      this.announce(reply, followers, event, 'message' in event ? messageJson(event.message) : undefined);
    });
    void done.catch(() => this.unannounced.delete(reply.id));
    return { done };
  }

  /**
   * A change of a reply shown in the chat, made on the chat's copy (which a change finds first, by
   * its id in the chat's log): written and announced as any message of the chat, then the thread's
   * copy, unannounced, with the same revision (a failure there leaves the thread's copy as it was
   * until the next change).
   */
  private changeShownInChat(inChat: StoredMessage, event: ChatEvent & { rev: number }): Promise<void> {
    const written = this.host.writeInChat(inChat, event);
    const copy: StoredMessage = { ...inChat, chatId: threadLogId(this.host.chatId, inChat.parentId!), seq: inChat.copySeq!, copySeq: inChat.seq };
    this.remember(copy);
    return this.after(written, async () => {
      if (inChat.rev !== undefined) copy.rev = inChat.rev;
      await this.write(copy, undefined);
    });
  }

  /** `userId` follows or unfollows `parentId`'s thread (README, "Threads"). */
  follow(userId: string, parentId: string, following: boolean): Promise<ThreadState | ApiError> {
    return this.withParent(parentId, (parent) => this.after(Promise.resolve(), () => this.follows.follow(userId, parent, following)));
  }

  /** Raises `userId`'s read mark in `parentId`'s thread, and tells its other connections. */
  markRead(userId: string, parentId: string, seq: number): Promise<ThreadState | ApiError> {
    return this.withParent(parentId, (parent) =>
      this.after(Promise.resolve(), async () => {
        const before = await this.follows.stateOf(userId, parent);
        const state = await this.follows.markRead(userId, parent, seq);
        if (state.readSeq > before.readSeq) this.host.deps.events.userEvent(this.host.appId, userId, { type: 'thread.read', chatId: this.host.chatId, parentId, seq: state.readSeq });
        return state;
      }),
    );
  }

  /** `userId` left the chat: it no longer follows its threads. */
  memberLeft(userId: string): Promise<void> {
    return this.after(Promise.resolve(), () => this.follows.forgetUser(userId));
  }

  /** `userId`'s state in `parentId`'s thread. */
  stateOf(userId: string, parentId: string): Promise<ThreadState | ApiError> {
    return this.withParent(parentId, (parent) => this.follows.stateOf(userId, parent));
  }

  /** Runs `op` in the chat's queue with the thread's parent, a published top-level message of the chat. */
  private async withParent<T>(parentId: string, op: (parent: StoredMessage) => Promise<T>): Promise<T | ApiError> {
    const settled = await this.host.run(async (): Promise<ApiError | { parent: StoredMessage }> => {
      const parent = await this.host.message(parentId);
      if (!parent || parent.seq > this.host.publishedSeq() || parent.parentId !== undefined) return new ApiError('MESSAGE_NOT_FOUND', 'no such thread in this chat');
      return { parent };
    });
    // The queue only finds the parent: the follow writes wait in the replies' chain, not in it.
    return settled instanceof ApiError ? settled : op(settled.parent);
  }

  /** Announces a reply's event to the thread's followers and openers, and remembers it for replays. */
  private announce(reply: StoredMessage, followers: readonly string[], event: ChatEvent, messageText: string | undefined): void {
    this.unannounced.delete(reply.id);
    this.announced.push({ n: ++this.announcements, reply });
    if (this.announced.length > RECENT_REPLIES) this.announced.shift();
    this.host.deps.events.threadEvent(this.host.appId, reply.parentId!, followers, event, messageText);
  }

  /**
   * What a resuming client of `userId` missed in the threads of `parents` (messages of the chat
   * changed after `afterRev`, as a replay read them) that it follows or has `open`: their replies
   * created or changed after it, read from the store; then, synchronously in the tick the socket
   * subscribes, `finish` adds the replies announced during the read and leaves out those whose
   * event is still to come (it arrives live). Undefined from `finish` when more than `limit`
   * replies, or more announcements than are remembered, went by: the client reloads.
   */
  async replayOf(
    parents: readonly { messageId: string; thread?: unknown; parentId?: string }[],
    audience: { userId: string; open: readonly string[] },
    afterRev: number,
    limit: number,
  ): Promise<() => StoredMessage[] | undefined> {
    const marker = this.announcements;
    const { appId, chatId, deps } = this.host;
    const threads = parents.filter((p) => p.thread !== undefined && p.parentId === undefined).map((p) => p.messageId);
    // Whose replies this client is sent live: the threads it follows, and those it has open (a
    // reply announced during the reads may be of a thread not among `parents`).
    const heard = threads.length > 0 || this.announced.length > 0 ? await this.follows.followedBy(audience.userId) : new Set<string>();
    for (const id of audience.open) heard.add(id);
    const read: StoredMessage[] = [];
    let complete = true;
    for (const parentId of threads) {
      if (!heard.has(parentId)) continue;
      const found = await deps.store.messages.changedSince(appId, threadLogId(chatId, parentId), afterRev, limit + 1);
      read.push(...found);
      if (read.length > limit) complete = false;
    }
    return () => {
      const oldest = this.announced[0]?.n ?? this.announcements + 1;
      if (!complete || (this.announcements > marker && oldest > marker + 1)) return undefined;
      const byId = new Map<string, StoredMessage>();
      for (const r of [...read, ...this.announced.filter((a) => a.n > marker).map((a) => a.reply)]) {
        if (this.unannounced.has(r.id) || (r.rev ?? 0) <= afterRev || !heard.has(r.parentId!)) continue;
        const known = byId.get(r.id);
        if (!known || (known.rev ?? 0) < (r.rev ?? 0)) byId.set(r.id, r);
      }
      const out = [...byId.values()].sort((a, b) => (a.rev ?? 0) - (b.rev ?? 0));
      return out.length > limit ? undefined : out;
    };
  }

  /**
   * A new reply's id, carrying `seqBits` (see above), after the thread's previous reply's id: ids in
   * the same millisecond order by their random bits, so a later reply in the same millisecond
   * takes the next millisecond instead (the embedded store pages a log by id).
   */
  private replyId(parentId: string, seqBits: number): string {
    const last = this.lastIds.get(parentId);
    let id = newMessageId(seqBits);
    if (last !== undefined && id <= last) id = newMessageId(seqBits, uuidv7Time(last) + 1);
    this.lastIds.delete(parentId);
    this.lastIds.set(parentId, id);
    if (this.lastIds.size > RECENT_REPLIES) this.lastIds.delete(this.lastIds.keys().next().value!);
    return id;
  }

  private remember(reply: StoredMessage): void {
    this.recent.delete(reply.id);
    this.recent.set(reply.id, reply);
    if (this.recent.size > RECENT_REPLIES) this.recent.delete(this.recent.keys().next().value!);
  }

  /** Runs `write` once `first` is durable and every earlier reply is written (whatever became of it). */
  private after<T>(first: Promise<void>, write: () => Promise<T>): Promise<T> {
    const run = this.chain.then(() => first).then(write);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** The reply in its thread's log, with the webhook events of `event` when given (in the outbox once the put resolves). */
  private async write(reply: StoredMessage, event: (ChatEvent & { rev: number }) | undefined): Promise<void> {
    const hooks = event ? this.host.deps.webhooks : undefined;
    const made = (event && hooks?.messageEvents(this.host.appId, [{ message: reply, event }])) ?? [];
    const events = Array.isArray(made) ? made : await made;
    try {
      await this.host.deps.store.messages.put([reply], undefined, events.length > 0 ? events : undefined);
    } catch (error) {
      hooks?.written(events, false);
      throw error;
    }
    hooks?.written(events, true);
  }
}

function field(path: string, message: string, code: 'MESSAGE_NOT_FOUND' | 'MESSAGE_DELETED' | 'VALIDATION_FAILED'): ApiError {
  return new ApiError(code, `${path}: ${message}`, { errors: [{ path, message }] });
}
