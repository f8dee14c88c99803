import { randomUUID } from 'node:crypto';
import { unpack } from 'msgpackr';
import type { RecognizedString, TemplatedApp, WebSocket } from 'uWebSockets.js';
import type { ChatEvent } from '../../node/chat/index.ts';
import { RealtimeHub } from '../../node/realtime/index.ts';

// A uWS app and its sockets in memory, for unit tests of the realtime hub: only what the hub
// calls, with uWS's semantics where the hub depends on them (checked against uWS itself):
// - a publication is routed when it is made, to the sockets subscribed then, and queued on each;
//   queues are written when the event loop iteration ends (here: drain()), or before anything the
//   socket sends or its close frame, so a socket's frames keep their order;
// - a socket unsubscribed from its last topic loses what was queued on it (uWS frees it as a
//   subscriber), which is what keeps anything from following a slow consumer's close frame;
// - a socket's writes are counted as uWS makes them: what was queued on it goes in one write, a
//   frame sent uncorked in one more, and everything sent inside cork() (the queue first) in one;
// - end() calls the app's close handler at once; the socket is then closed, and every method but
//   getUserData throws, as uWS's "Invalid access of closed uWS.WebSocket".

/** A frame as the socket's client reads it. */
export interface Frame {
  data: Buffer;
  isBinary: boolean;
}

const bytes = (data: RecognizedString): Buffer =>
  typeof data === 'string' ? Buffer.from(data) : data instanceof ArrayBuffer ? Buffer.from(data.slice(0)) : Buffer.from(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
const text = (data: RecognizedString): string => (typeof data === 'string' ? data : bytes(data).toString('utf8'));

type SocketMethods = 'send' | 'cork' | 'end' | 'subscribe' | 'unsubscribe' | 'getBufferedAmount' | 'getUserData';

export class FakeSocket<U> implements Pick<WebSocket<U>, SocketMethods> {
  /** What getBufferedAmount answers: the test says how far behind the client is. */
  bufferedAmount = 0;
  /** What send answers: 1 written, 0 backpressure built up, 2 dropped (past maxBackpressure; uWS then closes the socket, the fake does not). */
  sendResult = 1;
  /** The close frame, once end() was called. */
  closedWith: { code: number; message: string } | undefined;
  private readonly topics = new Set<string>();
  private queued: Frame[] = [];
  private closed = false;
  private readonly written: Frame[] = [];
  /** Socket writes so far (system calls, for uWS): see the rules at the top. */
  writes = 0;
  private corked = false;
  private corkedFrames = 0;

  constructor(
    private readonly app: FakeApp<U>,
    private readonly userData: U,
  ) {}

  /** This socket as the hub sees it (only the methods above exist). */
  get ws(): WebSocket<U> {
    return this as unknown as WebSocket<U>;
  }

  /** The frames the client has read, in order. */
  get frames(): readonly Frame[] {
    return this.written;
  }

  /** The frames the client has read, decoded: JSON text, MessagePack binary. */
  received(): Record<string, unknown>[] {
    return this.written.map((f) => (f.isBinary ? unpack(f.data) : JSON.parse(f.data.toString('utf8'))) as Record<string, unknown>);
  }

  /** The `type` of each frame read, with the `seq` of those that have one (`message.new:3`). */
  types(): string[] {
    return this.received().map((f) => (typeof f.seq === 'number' ? `${String(f.type)}:${f.seq}` : String(f.type)));
  }

  getUserData(): U {
    return this.userData;
  }

  getBufferedAmount(): number {
    this.live();
    return this.bufferedAmount;
  }

  send(message: RecognizedString, isBinary = false): number {
    this.live();
    this.flush();
    if (this.sendResult !== 2) {
      this.written.push({ data: bytes(message), isBinary });
      if (this.corked) this.corkedFrames++;
      else this.writes++;
    }
    return this.sendResult;
  }

  cork(cb: () => void): WebSocket<U> {
    this.live();
    if (this.corked) {
      cb();
      return this.ws;
    }
    this.corked = true;
    try {
      cb();
    } finally {
      this.corked = false;
      if (this.corkedFrames > 0) this.writes++;
      this.corkedFrames = 0;
    }
    return this.ws;
  }

  subscribe(topic: RecognizedString): boolean {
    this.live();
    const name = text(topic);
    if (this.topics.has(name)) return false;
    this.topics.add(name);
    this.app.subscribed(name, this, true);
    return true;
  }

  unsubscribe(topic: RecognizedString): boolean {
    this.live();
    const name = text(topic);
    if (!this.topics.delete(name)) return false;
    this.app.subscribed(name, this, false);
    if (this.topics.size === 0) this.queued = [];
    return true;
  }

  end(code = 1000, message: RecognizedString = ''): void {
    this.live();
    this.flush();
    this.closedWith = { code, message: text(message) };
    for (const topic of this.topics) this.app.subscribed(topic, this, false);
    this.topics.clear();
    this.app.onClose(this.ws);
    this.closed = true;
  }

  /** Called by the app: a publication routed to this socket. */
  enqueue(frame: Frame): void {
    this.queued.push(frame);
  }

  /** Writes what was queued (the app at the end of a loop iteration, or before a send or a close). */
  flush(): void {
    if (this.queued.length === 0) return;
    this.written.push(...this.queued);
    if (this.corked) this.corkedFrames += this.queued.length;
    else this.writes++;
    this.queued = [];
  }

  private live(): void {
    if (this.closed) throw new Error('Invalid access of closed uWS.WebSocket/SSLWebSocket.');
  }
}

export class FakeApp<U> implements Pick<TemplatedApp, 'publish' | 'numSubscribers'> {
  /** Every publication, in order: which topics the hub chose to encode for. */
  readonly published: { topic: string; isBinary: boolean }[] = [];
  /** The close handler of the app's WebSocket behaviour; uWS calls it from within end(). */
  onClose: (ws: WebSocket<U>) => void = () => undefined;
  private readonly subscribers = new Map<string, Set<FakeSocket<U>>>();
  private readonly sockets = new Set<FakeSocket<U>>();

  /** This app as the hub sees it (only publish and numSubscribers exist). */
  get app(): TemplatedApp {
    return this as unknown as TemplatedApp;
  }

  socket(userData: U): FakeSocket<U> {
    const socket = new FakeSocket(this, userData);
    this.sockets.add(socket);
    return socket;
  }

  publish(topic: RecognizedString, message: RecognizedString, isBinary = false): boolean {
    const name = text(topic);
    this.published.push({ topic: name, isBinary });
    const to = this.subscribers.get(name);
    if (!to) return false;
    for (const socket of to) socket.enqueue({ data: bytes(message), isBinary });
    return true;
  }

  numSubscribers(topic: RecognizedString): number {
    return this.subscribers.get(text(topic))?.size ?? 0;
  }

  /** The end of an event loop iteration: every socket's queue is written. */
  drain(): void {
    for (const socket of this.sockets) socket.flush();
  }

  /** Called by a socket as it joins or leaves a topic. */
  subscribed(topic: string, socket: FakeSocket<U>, on: boolean): void {
    let set = this.subscribers.get(topic);
    if (on) {
      if (!set) this.subscribers.set(topic, (set = new Set()));
      set.add(socket);
    } else if (set?.delete(socket) && set.size === 0) this.subscribers.delete(topic);
  }
}

// ---- A hub on a fake app, its sockets opened as the gateway opens them ----------------------

/** What a socket of the hub carries (the hub's `Connection`). */
export type Connection = ReturnType<Parameters<RealtimeHub['add']>[0]['getUserData']>;

export interface SocketOptions {
  encoding?: Connection['encoding'];
  /** The chats the socket is subscribed to as it opens (the gateway: the user's chats). */
  chats?: string[];
  /** Whether it is joined and sent `ready` at once; false leaves it as it is before `ready`. */
  joined?: boolean;
}

export const APP_ID = 'app';

export function fakeNode() {
  const app = new FakeApp<Connection>();
  let eventsOut = 0;
  const hub = new RealtimeHub(app.app, { eventOut: (n) => void (eventsOut += n) });
  // The gateway's close handler: marks the socket closed, then takes it out of the hub.
  app.onClose = (ws) => {
    ws.getUserData().closed = true;
    hub.remove(ws);
  };
  /** A socket opened as the gateway opens one: counted, subscribed to its chats, joined, `ready`. */
  const connect = (userId: string, { encoding = 'json', chats = [], joined = true }: SocketOptions = {}): FakeSocket<Connection> => {
    const socket = app.socket({ appId: APP_ID, userId, connId: randomUUID(), encoding, chats: new Set(), threads: undefined, joined: false, closed: false, slow: false });
    hub.add(socket.ws);
    for (const chatId of chats) hub.subscribe(socket.ws, chatId);
    if (joined) {
      hub.join(socket.ws);
      hub.send(socket.ws, { type: 'ready', connectionId: socket.getUserData().connId, userId });
    }
    return socket;
  };
  return { app, hub, connect, eventsOut: () => eventsOut };
}

// ---- Events -----------------------------------------------------------------------------------

export const messageNew = (chatId: string, seq: number, content = `message ${seq}`): ChatEvent => ({
  type: 'message.new',
  chatId,
  seq,
  rev: seq,
  message: { chatId, timeStamp: '2026-01-01T00:00:00.000Z', messageId: `m${seq}`, senderId: 'sender', content, edited: false, reactions: [], reactionCounts: {}, type: 'regular' as const, seq, deleted: false },
});

export const typing = (chatId: string, userId: string, started = true): ChatEvent => ({ type: started ? 'typing.started' : 'typing.stopped', chatId, userId });

export const removed = (chatId: string, userId: string): ChatEvent => ({ type: 'membership.changed', chatId, userId, change: 'removed' });
