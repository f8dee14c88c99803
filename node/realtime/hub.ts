import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import type { ChatEvent, EventSink, UserEvent } from '../chat/index.ts';
import { closeCodes, PROTOCOL_VERSION } from './protocol.ts';
import { ackFrame, encode, ENCODINGS, eventFrame, TYPING_FRAME, type Encoding } from './frames.ts';
import { HeldAcks } from './held-acks.ts';
import { REALTIME_LIMITS } from './limits.ts';

/**
 * What a socket carries, as the hub reads it. uWS copies the user data's own properties onto the
 * socket object itself, and V8 keeps them as fast properties only up to 15 (with 14: a 136-byte
 * array, the layout shared by every socket); past that each socket gets a dictionary of its own
 * (832 bytes with 16). The gateway's state adds to these nine fields and stays within 15.
 */
export interface Connection {
  appId: string;
  userId: string;
  /** The connection's id, or the number it is made from: see connectionId(). */
  connId: string | number;
  encoding: Encoding;
  /**
   * Chats whose topic this socket is subscribed to (or will be, when it joins); undefined while
   * there are none (a set is about 200 bytes, made with the socket's first chat).
   */
  chats: Set<string> | undefined;
  /**
   * Threads this socket has open (`chatId/parentId`), each in one of its chats: their events come
   * to it whether or not its user follows them. Undefined while there are none.
   */
  threads: Set<string> | undefined;
  /**
   * Whether the socket receives its topics' events yet. Until `join`, its user and chats count
   * as interest (so a cluster node starts hearing them) but nothing is delivered to it: `ready`
   * must be the first frame a client gets.
   */
  joined: boolean;
  closed: boolean;
  /** The socket fell too far behind and is being closed as a slow consumer. */
  slow: boolean;
}

export const chatTopic = (enc: Encoding, appId: string, chatId: string) => `${enc}:c:${appId}:${chatId}`;
export const userTopic = (enc: Encoding, appId: string, userId: string) => `${enc}:u:${appId}:${userId}`;
export const threadTopic = (enc: Encoding, appId: string, thread: string) => `${enc}:t:${appId}:${thread}`;
/** A thread as a socket's `threads` names it. */
const threadKey = (chatId: string, parentId: string) => `${chatId}/${parentId}`;

export interface HubCounters {
  eventOut: (n: number) => void;
}

/**
 * Told when this node's interest in a chat or a user starts (first local socket) and ends (last
 * one gone): how a cluster node subscribes to exactly the bus topics its sockets need.
 */
export interface HubInterest {
  chat(appId: string, chatId: string, interested: boolean): void;
  user(appId: string, userId: string, interested: boolean): void;
}

/**
 * Delivers events to live sockets. Each event is encoded at most once per encoding, and only for
 * encodings that have subscribers, then handed to uWS's native topic fan-out: no JavaScript loop
 * over recipients. It also tracks which sockets belong to which user, so membership changes move
 * subscriptions at once.
 */
export class RealtimeHub implements EventSink {
  private readonly byUser = new Map<string, Set<WebSocket<Connection>>>();
  /** Users with a live socket on this node, per application. */
  private readonly usersByApp = new Map<string, Set<string>>();
  /** Bytes handed to uWS since the last slow-consumer check. */
  private uncheckedBytes = 0;
  /** Local sockets subscribed to each chat (`appId/chatId`), for HubInterest. */
  private readonly chatSockets = new Map<string, number>();
  /** Acks of this turn, written at its end one write per socket (held-acks.ts); flushed before any other frame goes out. */
  private readonly acks = new HeldAcks<Connection>((ws, data) => this.write(ws, data));
  interest: HubInterest | undefined;

  constructor(
    private readonly app: TemplatedApp,
    private readonly counters: HubCounters,
  ) {}

  /** Live sockets of a user on this node. */
  sockets(appId: string, userId: string): ReadonlySet<WebSocket<Connection>> {
    return this.byUser.get(`${appId}/${userId}`) ?? new Set();
  }

  /** Users of an application with a live socket on this node (the set itself: read, do not keep). */
  appUsers(appId: string): ReadonlySet<string> {
    return this.usersByApp.get(appId) ?? new Set();
  }

  /** Live sockets of every user of an application on this node (a scan: for rare events only). */
  appSockets(appId: string): WebSocket<Connection>[] {
    const prefix = `${appId}/`;
    const out: WebSocket<Connection>[] = [];
    for (const [key, set] of this.byUser) if (key.startsWith(prefix)) out.push(...set);
    return out;
  }

  /** Every socket counted on this node (a scan: for timers and shutdown; one may close on the way). */
  *all(): IterableIterator<WebSocket<Connection>> {
    for (const set of this.byUser.values()) yield* set;
  }

  get connectionCount(): number {
    let n = 0;
    for (const set of this.byUser.values()) n += set.size;
    return n;
  }

  add(ws: WebSocket<Connection>): number {
    const c = ws.getUserData();
    const key = `${c.appId}/${c.userId}`;
    let set = this.byUser.get(key);
    if (!set) this.byUser.set(key, (set = new Set()));
    set.add(ws);
    if (c.joined) ws.subscribe(userTopic(c.encoding, c.appId, c.userId));
    if (set.size === 1) {
      this.interest?.user(c.appId, c.userId, true);
      let users = this.usersByApp.get(c.appId);
      if (!users) this.usersByApp.set(c.appId, (users = new Set()));
      users.add(c.userId);
    }
    return set.size;
  }

  /** Starts delivering the socket's user and chat events to it (see `Connection.joined`). */
  join(ws: WebSocket<Connection>): void {
    const c = ws.getUserData();
    if (c.closed || c.joined) return;
    c.joined = true;
    ws.subscribe(userTopic(c.encoding, c.appId, c.userId));
    for (const chatId of c.chats ?? []) ws.subscribe(chatTopic(c.encoding, c.appId, chatId));
    for (const thread of c.threads ?? []) ws.subscribe(threadTopic(c.encoding, c.appId, thread));
  }

  remove(ws: WebSocket<Connection>): number {
    const c = ws.getUserData();
    const key = `${c.appId}/${c.userId}`;
    const set = this.byUser.get(key);
    if (!set) return 0;
    if (!set.delete(ws)) return set.size;
    for (const chatId of c.chats ?? []) this.chatInterest(c.appId, chatId, -1);
    c.chats = undefined;
    c.threads = undefined;
    if (set.size === 0) {
      this.byUser.delete(key);
      this.interest?.user(c.appId, c.userId, false);
      const users = this.usersByApp.get(c.appId);
      users?.delete(c.userId);
      if (users?.size === 0) this.usersByApp.delete(c.appId);
    }
    return set.size;
  }

  subscribe(ws: WebSocket<Connection>, chatId: string): void {
    const c = ws.getUserData();
    if (c.closed || c.slow || c.chats?.has(chatId)) return;
    (c.chats ??= new Set()).add(chatId);
    if (c.joined) ws.subscribe(chatTopic(c.encoding, c.appId, chatId));
    this.chatInterest(c.appId, chatId, 1);
  }

  unsubscribe(ws: WebSocket<Connection>, chatId: string): void {
    const c = ws.getUserData();
    if (c.closed || !c.chats?.delete(chatId)) return;
    ws.unsubscribe(chatTopic(c.encoding, c.appId, chatId));
    // Out of the chat, out of its threads.
    for (const thread of c.threads ?? []) if (thread.startsWith(`${chatId}/`)) this.closeThread(ws, chatId, thread.slice(chatId.length + 1));
    this.chatInterest(c.appId, chatId, -1);
  }

  /**
   * Opens a thread of one of the socket's chats on it (see Connection.threads), unless the socket
   * is not in the chat or already has `limit` threads open.
   */
  openThread(ws: WebSocket<Connection>, chatId: string, parentId: string, limit: number): 'opened' | 'already' | 'full' | 'not-member' {
    const c = ws.getUserData();
    if (c.closed || c.slow || !c.chats?.has(chatId)) return 'not-member';
    const key = threadKey(chatId, parentId);
    if (c.threads?.has(key)) return 'already';
    if ((c.threads?.size ?? 0) >= limit) return 'full';
    (c.threads ??= new Set()).add(key);
    if (c.joined) ws.subscribe(threadTopic(c.encoding, c.appId, key));
    return 'opened';
  }

  closeThread(ws: WebSocket<Connection>, chatId: string, parentId: string): void {
    const c = ws.getUserData();
    const key = threadKey(chatId, parentId);
    if (c.closed || !c.threads?.delete(key)) return;
    if (c.threads.size === 0) c.threads = undefined;
    ws.unsubscribe(threadTopic(c.encoding, c.appId, key));
  }

  private chatInterest(appId: string, chatId: string, delta: 1 | -1): void {
    const key = `${appId}/${chatId}`;
    const n = (this.chatSockets.get(key) ?? 0) + delta;
    if (n > 0) this.chatSockets.set(key, n);
    else this.chatSockets.delete(key);
    if (n === 1 && delta === 1) this.interest?.chat(appId, chatId, true);
    if (n === 0) this.interest?.chat(appId, chatId, false);
  }

  chatEvent(appId: string, event: ChatEvent, messageText?: string): void {
    const publish = () => this.publish((enc) => chatTopic(enc, appId, event.chatId), event, messageText);
    if (event.type === 'typing.started' || event.type === 'typing.stopped') this.withoutUser(appId, event.userId, event.chatId, publish);
    else publish();
  }

  /**
   * Runs `publish` with the sockets of `userId` on this node out of the chat's topics: a member is
   * not told of its own typing, on any of its connections. Unsubscribed and subscribed again in the
   * same turn, so they miss nothing else.
   */
  private withoutUser(appId: string, userId: string, chatId: string, publish: () => void): void {
    const own = [...this.sockets(appId, userId)].filter((ws) => {
      const c = ws.getUserData();
      return !c.closed && c.joined && c.chats?.has(chatId) === true;
    });
    for (const ws of own) ws.unsubscribe(chatTopic(ws.getUserData().encoding, appId, chatId));
    try {
      publish();
    } finally {
      for (const ws of own) {
        // The publish may have run a slow-consumer check that closed one of them: uWS throws on a
        // closed socket, and the others must still get the chat back.
        if (!ws.getUserData().closed) ws.subscribe(chatTopic(ws.getUserData().encoding, appId, chatId));
      }
    }
  }

  /**
   * A chat event already encoded as its JSON frame (see eventFrame): published as it is to the
   * chat's JSON sockets, and packed for MessagePack ones from `event()` (or from the JSON, parsed,
   * when not given). How events that crossed the bus are delivered without being re-encoded.
   */
  chatFrame(appId: string, chatId: string, json: string, event?: () => object): void {
    // A typing frame (eventFrame puts `v` and `type` first) goes to everyone but the typer.
    if (json.startsWith(TYPING_FRAME)) {
      const { userId } = JSON.parse(json) as { userId: string };
      return this.withoutUser(appId, userId, chatId, () => this.chatFrameToAll(appId, chatId, json, event));
    }
    this.chatFrameToAll(appId, chatId, json, event);
  }

  private chatFrameToAll(appId: string, chatId: string, json: string, event?: () => object): void {
    this.acks.flush();
    const topic = chatTopic('json', appId, chatId);
    const subscribers = this.app.numSubscribers(topic);
    if (subscribers > 0) {
      this.app.publish(topic, json, false);
      this.counters.eventOut(subscribers);
      this.sent(json);
    }
    const packedTopic = chatTopic('msgpack', appId, chatId);
    const packedSubscribers = this.app.numSubscribers(packedTopic);
    if (packedSubscribers === 0) return;
    const data = encode('msgpack', event ? event() : (JSON.parse(json) as object));
    this.app.publish(packedTopic, data, true);
    this.counters.eventOut(packedSubscribers);
    this.sent(data);
  }

  threadEvent(appId: string, parentId: string, followers: readonly string[], event: ChatEvent, messageText?: string): void {
    this.threadFrame(appId, event.chatId, parentId, followers, eventFrame(event, messageText), () => ({ v: PROTOCOL_VERSION, ...event }));
  }

  /**
   * A thread's event as its JSON frame (see chatFrame): published to the sockets that have the
   * thread open, then sent to each other socket of a follower that is in the chat, so each gets
   * it once. A follower's sockets are a few; the openers are uWS's native fan-out.
   */
  threadFrame(appId: string, chatId: string, parentId: string, followers: readonly string[], json: string, event?: () => object): void {
    const key = threadKey(chatId, parentId);
    this.acks.flush();
    let packed: Buffer | string | undefined;
    const dataFor = (enc: Encoding) => (enc === 'json' ? json : (packed ??= encode('msgpack', event ? event() : (JSON.parse(json) as object))));
    for (const enc of ENCODINGS) {
      const topic = threadTopic(enc, appId, key);
      const subscribers = this.app.numSubscribers(topic);
      if (subscribers === 0) continue;
      const data = dataFor(enc);
      this.app.publish(topic, data, enc === 'msgpack');
      this.counters.eventOut(subscribers);
      this.sent(data);
    }
    for (const userId of followers) {
      for (const ws of this.sockets(appId, userId)) {
        const c = ws.getUserData();
        if (c.closed || c.slow || !c.joined || !c.chats?.has(chatId) || c.threads?.has(key)) continue;
        this.sendData(ws, c, dataFor(c.encoding));
        this.counters.eventOut(1);
      }
    }
  }

  userEvent(appId: string, userId: string, event: UserEvent): void {
    this.publish((enc) => userTopic(enc, appId, userId), event);
  }

  membershipMoved(appId: string, chatId: string, userId: string, member: boolean): void {
    for (const ws of this.sockets(appId, userId)) {
      if (member) this.subscribe(ws, chatId);
      else this.unsubscribe(ws, chatId);
    }
  }

  /** Sends one frame to one socket (errors, replays), encoded for that socket. */
  send(ws: WebSocket<Connection>, frame: object): void {
    const c = ws.getUserData();
    if (c.closed) return;
    this.sendData(ws, c, encode(c.encoding, { v: PROTOCOL_VERSION, ...frame }));
  }

  /**
   * Acknowledges an action: `{ type: 'ack', id, result }`, reusing its message's JSON (frames.ts).
   * Written at the end of the turn, with the socket's other acks of the turn in one write.
   */
  ack(ws: WebSocket<Connection>, id: string, result: object): void {
    const c = ws.getUserData();
    if (c.closed) return;
    const data = c.encoding === 'json' ? ackFrame(id, result) : encode(c.encoding, { v: PROTOCOL_VERSION, type: 'ack', id, result });
    this.acks.add(ws, data);
    this.sent(data);
  }

  /**
   * Closes an open socket with a close frame (`code`, `reason`), after the acks it is owed (none
   * if the caller marked it closed already: then nothing more is written to it). Every close the
   * server makes goes through here.
   */
  end(ws: WebSocket<Connection>, code: number, reason: string): void {
    this.acks.flush();
    ws.end(code, reason);
  }

  private sendData(ws: WebSocket<Connection>, c: Connection, data: string | Buffer): void {
    this.acks.flush();
    if (c.closed) return;
    this.write(ws, data);
    this.sent(data);
  }

  private write(ws: WebSocket<Connection>, data: string | Buffer): void {
    const c = ws.getUserData();
    // 2 = dropped: the socket is past maxBackpressure and uWS closes it.
    if (ws.send(data, c.encoding === 'msgpack') === 2) c.slow = true;
  }

  /**
   * Closes with 4001 every socket holding more than `slowConsumerBytes` unsent. Called on a timer
   * and after every `slowConsumerCheckBytes` handed to uWS: no socket's buffer can grow by more
   * than that between two checks, so a reader that stops is closed with 4001 (and a close frame it
   * can read) well before uWS's hard limit would cut it off with 1006.
   */
  dropSlowConsumers(): void {
    this.uncheckedBytes = 0;
    const { code, reason, reconnect } = closeCodes.SLOW_CONSUMER;
    for (const set of this.byUser.values()) {
      for (const ws of set) {
        const c = ws.getUserData();
        if (c.closed || c.slow || ws.getBufferedAmount() <= REALTIME_LIMITS.slowConsumerBytes) continue;
        c.slow = true;
        // Nothing more is queued behind the close frame: the client resumes from its seqs.
        for (const chatId of [...(c.chats ?? [])]) this.unsubscribe(ws, chatId);
        ws.unsubscribe(userTopic(c.encoding, c.appId, c.userId));
        this.end(ws, code, JSON.stringify({ reason, reconnect }));
      }
    }
  }

  private sent(data: string | Buffer): void {
    this.uncheckedBytes += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    if (this.uncheckedBytes >= REALTIME_LIMITS.slowConsumerCheckBytes) this.dropSlowConsumers();
  }

  private publish(topicOf: (enc: Encoding) => string, event: ChatEvent | UserEvent, messageText?: string): void {
    this.acks.flush();
    for (const enc of ENCODINGS) {
      const topic = topicOf(enc);
      const subscribers = this.app.numSubscribers(topic);
      if (subscribers === 0) continue;
      const data = enc === 'json' ? eventFrame(event, messageText) : encode(enc, { v: PROTOCOL_VERSION, ...event });
      this.app.publish(topic, data, enc === 'msgpack');
      this.counters.eventOut(subscribers);
      this.sent(data);
    }
  }
}
