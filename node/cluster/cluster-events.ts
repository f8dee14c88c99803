import type { Logger } from '../../common/index.ts';
import type { Bus, BusHandler, BusTopic } from '../bus/index.ts';
import type { ChatEvent, EventSink, Replay, ReplayTarget, UserEvent } from '../chat/index.ts';
import { eventFrame, PROTOCOL_VERSION, ReplayWaiters, type HubInterest, type RealtimeHub, type Replays, type ReplayWaiter } from '../realtime/index.ts';
import { decodeChatWire, decodeUserWire, encodeFrames, encodeWire } from './wire.ts';

interface Subscription {
  count: number;
  unsubscribe: () => void;
}

/**
 * The event sink of a cluster node. Every event goes to this node's sockets at once (through the
 * hub) and to the bus, which carries it once to each other node subscribed to the chat's or the
 * user's topic; those deliver it to their sockets. A node subscribes to a chat's topic while one
 * of its sockets is in the chat (or a resume holds it), and to a user's topic while the user has a
 * socket here, so an event crosses Redis once per interested node, never per recipient.
 */
export class ClusterEvents implements EventSink, HubInterest, Replays {
  private readonly subscriptions = new Map<string, Subscription>();
  private readonly waiters = new ReplayWaiters();
  /**
   * Each chat's event frames of this turn of the event loop, in publication order, not yet on the
   * bus: a group commit's events cross Redis as one message (see flushOutbox).
   */
  private readonly outbox = new Map<string, { appId: string; chatId: string; frames: string[]; rev: number | undefined }>();
  private flushing = false;
  /**
   * Per chat this node's sockets are in, the highest revision of a message event they were sent.
   * Revisions grow across the chat's writers (a new writer numbers past the old one's), so an
   * event at or below it is older than one already sent: the backlog of another node that reaches
   * here late (through a bus connection that was cut off and replaced), or a write of an old
   * owner that was paused and resumes. It is dropped: sockets get a gap, which clients page, never
   * a message twice or out of order.
   */
  private readonly sentRev = new Map<string, number>();
  private staleEvents = 0;

  constructor(
    private readonly bus: Bus,
    private readonly hub: RealtimeHub,
    private readonly log: Logger,
    /** Called when a user's deletion on another node must close its sockets here. */
    private readonly userGoneHere: (appId: string, userId: string) => void,
    /**
     * This node's own view, checked before a bus message widens or ends anything: whether the
     * user is a member of the chat, and whether the user exists. The bus only says where to look
     * (anything that can publish on it could say anything).
     */
    private readonly verify: { isMember(appId: string, chatId: string, userId: string): Promise<boolean>; userExists(appId: string, userId: string): Promise<boolean> },
  ) {}

  // ---- EventSink: what the actors of this node produce ---------------------------------------

  chatEvent(appId: string, event: ChatEvent, messageText?: string): void {
    const json = eventFrame(event, messageText);
    const rev = revOf(event);
    const key = `${appId}/${event.chatId}`;
    if (this.fresh(key, event.chatId, rev)) this.hub.chatFrame(appId, event.chatId, json, () => ({ v: PROTOCOL_VERSION, ...event }));
    const pending = this.outbox.get(key);
    if (pending) {
      pending.frames.push(json);
      if (rev !== undefined) pending.rev = Math.max(pending.rev ?? 0, rev);
    } else this.outbox.set(key, { appId, chatId: event.chatId, frames: [json], rev });
    if (!this.flushing) {
      this.flushing = true;
      // At the end of this turn of the event loop: the events of every write that completed in
      // it (several chats, several group commits) leave together.
      setImmediate(() => this.flushOutbox());
    }
  }

  /** Publishes every chat's pending frames, one bus message per chat. */
  private flushOutbox(): void {
    this.flushing = false;
    for (const { appId, chatId, frames, rev } of this.outbox.values()) this.bus.publish({ kind: 'chat', appId, chatId }, encodeFrames(frames, rev));
    this.outbox.clear();
  }

  /** A chat's pending frames go out now: something published after them must arrive after them. */
  private flushChat(appId: string, chatId: string): void {
    const key = `${appId}/${chatId}`;
    const pending = this.outbox.get(key);
    if (!pending) return;
    this.outbox.delete(key);
    this.bus.publish({ kind: 'chat', appId, chatId }, encodeFrames(pending.frames, pending.rev));
  }

  threadEvent(appId: string, parentId: string, followers: readonly string[], event: ChatEvent, messageText?: string): void {
    const { chatId } = event;
    const json = eventFrame(event, messageText);
    const rev = revOf(event);
    if (this.fresh(`${appId}/${chatId}`, chatId, rev, true)) this.hub.threadFrame(appId, chatId, parentId, followers, json, () => ({ v: PROTOCOL_VERSION, ...event }));
    // After the chat's events so far, as its own bus message (it names its audience).
    this.flushChat(appId, chatId);
    this.bus.publish({ kind: 'chat', appId, chatId }, encodeWire({ t: 't', parentId, followers: [...followers], frame: json, ...(rev === undefined ? {} : { rev }) }));
  }

  userEvent(appId: string, userId: string, event: UserEvent): void {
    this.hub.userEvent(appId, userId, event);
    this.bus.publish({ kind: 'user', appId, userId }, encodeWire({ t: 'e', e: event }));
  }

  membershipMoved(appId: string, chatId: string, userId: string, member: boolean): void {
    // After the chat's events so far (a removed member hears of its removal before it is unsubscribed).
    this.flushChat(appId, chatId);
    this.hub.membershipMoved(appId, chatId, userId, member);
    this.bus.publish({ kind: 'user', appId, userId }, encodeWire({ t: 'm', chatId, member }));
  }

  /** A user was deleted: its sockets on every node close. */
  userGone(appId: string, userId: string): void {
    this.bus.publish({ kind: 'user', appId, userId }, encodeWire({ t: 'x' }));
  }

  get nodeId(): string {
    return this.bus.nodeId;
  }

  /** The owner of a chat hands a resuming socket what it missed (see node/chat/replay.ts). */
  deliver = (appId: string, chatId: string, to: ReplayTarget, replay: Replay): void => {
    if (to.nodeId === this.bus.nodeId) return this.waiters.deliver(chatId, to, replay);
    // In order with the chat's events: those already published go first, as the replay assumes.
    this.flushChat(appId, chatId);
    this.bus.publish({ kind: 'chat', appId, chatId }, encodeWire({ t: 'r', to, frames: replay.frames, entry: replay.entry }));
  };

  // ---- HubInterest: which topics this node listens to ----------------------------------------

  chat(appId: string, chatId: string, interested: boolean): void {
    this.interest({ kind: 'chat', appId, chatId }, interested, (payload) => this.onChat(appId, chatId, payload));
  }

  user(appId: string, userId: string, interested: boolean): void {
    this.interest({ kind: 'user', appId, userId }, interested, (payload) => this.onUser(appId, userId, payload));
  }

  /**
   * Keeps the chat's topic subscribed while a socket of this node waits for its replay, and routes
   * the replay to `waiter`. Returns the function that ends the wait.
   */
  wait(appId: string, chatId: string, connId: string, waiter: ReplayWaiter): () => void {
    const remove = this.waiters.add(chatId, connId, waiter);
    this.chat(appId, chatId, true);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      remove();
      this.chat(appId, chatId, false);
    };
  }

  /** Resolves when this node's subscriptions are in place at the transport (rejects if it is down). */
  ready(): Promise<void> {
    return this.bus.ready();
  }

  private interest(topic: BusTopic, interested: boolean, handler: BusHandler): void {
    const key = topic.kind === 'chat' ? `c/${topic.appId}/${topic.chatId}` : topic.kind === 'user' ? `u/${topic.appId}/${topic.userId}` : 'control';
    const existing = this.subscriptions.get(key);
    if (interested) {
      if (existing) existing.count++;
      else this.subscriptions.set(key, { count: 1, unsubscribe: this.bus.subscribe(topic, handler) });
      return;
    }
    if (!existing) return;
    if (--existing.count > 0) return;
    this.subscriptions.delete(key);
    if (topic.kind === 'chat') this.sentRev.delete(`${topic.appId}/${topic.chatId}`);
    existing.unsubscribe();
  }

  /**
   * Whether events up to `rev` of the chat `key` (`appId/chatId`) are newer than what this node's
   * sockets in it were sent (see sentRev); records `rev` when they are. Events without a revision
   * (typing, read marks, membership) always pass. Kept only while the node is subscribed to it.
   * A thread's event (`sharesRev`) has the revision of the chat event before it (its parent's
   * summary, or the chat's copy of a reply shown in the chat): it passes at that revision too.
   */
  private fresh(key: string, chatId: string, rev: number | undefined, sharesRev = false): boolean {
    if (rev === undefined) return true;
    const sent = this.sentRev.get(key);
    if (sent !== undefined && (sharesRev ? rev < sent : rev <= sent)) {
      this.staleEvents++;
      this.log.debug({ chatId, rev, sent }, 'events older than what sockets here were sent: dropped');
      return false;
    }
    if (this.subscriptions.has(`c/${key}`)) this.sentRev.set(key, rev);
    return true;
  }

  /** Chat events dropped as older than what this node's sockets were sent (see sentRev). */
  get staleDropped(): number {
    return this.staleEvents;
  }

  private onChat(appId: string, chatId: string, payload: Uint8Array | string): void {
    const message = decodeChatWire(payload);
    if (!message) return this.log.debug({ chatId }, 'bus: ignored a chat message of an unknown shape');
    if (message.t === 'f') {
      if (!this.fresh(`${appId}/${chatId}`, chatId, message.rev)) return;
      for (const json of message.frames) this.hub.chatFrame(appId, chatId, json);
      return;
    }
    if (message.t === 'e') return this.fresh(`${appId}/${chatId}`, chatId, revOf(message.e)) ? this.hub.chatEvent(appId, message.e) : undefined;
    if (message.t === 't') {
      if (this.fresh(`${appId}/${chatId}`, chatId, message.rev, true)) this.hub.threadFrame(appId, chatId, message.parentId, message.followers, message.frame);
      return;
    }
    if (message.to.nodeId === this.bus.nodeId) this.waiters.deliver(chatId, message.to, { frames: message.frames, entry: message.entry });
  }

  private onUser(appId: string, userId: string, payload: Uint8Array | string): void {
    const message = decodeUserWire(payload);
    if (!message) return this.log.debug({ userId }, 'bus: ignored a user message of an unknown shape');
    if (message.t === 'e') this.hub.userEvent(appId, userId, message.e);
    // Leaving a chat narrows access: at once. Joining one widens it: only once the store says so
    // (the owner makes a membership durable before announcing it, so a true one is always found).
    else if (message.t === 'm' && !message.member) this.hub.membershipMoved(appId, message.chatId, userId, false);
    else if (message.t === 'm') {
      const { chatId } = message;
      this.verify.isMember(appId, chatId, userId).then(
        (member) => (member ? this.hub.membershipMoved(appId, chatId, userId, true) : this.log.warn({ appId, chatId, userId }, 'bus: ignored a membership the store does not hold')),
        (error: unknown) => this.log.warn({ err: String(error), chatId }, 'bus: cannot check a membership; the socket gets the chat on reconnect'),
      );
    } else {
      this.verify.userExists(appId, userId).then(
        (exists) => (exists ? this.log.warn({ appId, userId }, 'bus: ignored the deletion of a user the store still holds') : this.userGoneHere(appId, userId)),
        (error: unknown) => this.log.warn({ err: String(error), userId }, 'bus: cannot check a user deletion'),
      );
    }
  }
}

/** The revision a chat event carries (message events do; typing, read marks and membership do not). */
function revOf(event: ChatEvent): number | undefined {
  const rev = (event as { rev?: unknown }).rev;
  return typeof rev === 'number' && rev > 0 ? rev : undefined;
}
