import WebSocket from 'ws';
import { pack, unpack } from 'msgpackr';

export type Frame = Record<string, any> & { type: string };

/**
 * A WebSocket test client: records every frame it receives, waits for frames by predicate (no
 * sleeps), and sends actions that resolve with their ack or error frame.
 */
export class WsClient {
  readonly frames: Frame[] = [];
  private waiters: { predicate: (f: Frame) => boolean; resolve: (f: Frame) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }[] = [];
  private seq = 0;
  private listeners: ((f: Frame) => void)[] = [];
  closed: { code: number; reason: string } | undefined;
  private closeWaiters: ((c: { code: number; reason: string }) => void)[] = [];

  private constructor(
    readonly socket: WebSocket,
    readonly encoding: 'json' | 'msgpack',
  ) {
    socket.on('message', (data, isBinary) => {
      const buf = data as Buffer;
      const frame = (isBinary ? unpack(buf) : JSON.parse(buf.toString('utf8'))) as Frame;
      this.frames.push(frame);
      for (const listener of this.listeners) listener(frame);
      for (const w of [...this.waiters]) {
        if (w.predicate(frame)) {
          clearTimeout(w.timer);
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(frame);
        }
      }
    });
    socket.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      for (const w of this.closeWaiters) w(this.closed);
      for (const w of this.waiters) {
        clearTimeout(w.timer);
        w.reject(new Error(`socket closed (${code}) while waiting`));
      }
      this.waiters = [];
    });
  }

  /** Connects and resolves after the server's `ready` frame. */
  static async connect(nodeUrl: string, jwt: string, options: { encoding?: 'json' | 'msgpack'; resume?: Record<string, number | string>; threads?: string[] } = {}): Promise<WsClient> {
    const encoding = options.encoding ?? 'json';
    let url = `${nodeUrl.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(jwt)}`;
    if (options.resume) url += `&resume=${Object.entries(options.resume).map(([c, s]) => `${c}:${s}`).join(',')}`;
    // Threads open from the start: `chatId:parentId` each.
    if (options.threads) url += `&threads=${options.threads.join(',')}`;
    const socket = new WebSocket(url, encoding === 'msgpack' ? ['msgpack'] : []);
    const client = new WsClient(socket, encoding);
    const ready = client.waitFor((f) => f.type === 'ready', 5000);
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('error', reject);
        socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      });
    } catch (error) {
      ready.catch(() => undefined);
      client.dropWaiters();
      socket.terminate();
      throw error;
    }
    await ready;
    return client;
  }

  /** Resolves with the first frame (already received or future) matching `predicate`. */
  waitFor(predicate: (f: Frame) => boolean, timeoutMs = 5000, fromIndex = 0): Promise<Frame> {
    const seen = this.frames.slice(fromIndex).find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.timer !== timer);
        reject(new Error(`timed out waiting for a frame; got ${this.frames.length} frames: ${JSON.stringify(this.frames.slice(-5))}`));
      }, timeoutMs);
      this.waiters.push({ predicate, resolve, reject, timer });
    });
  }

  /** Waits until `count` frames match `predicate`; returns them in arrival order. */
  async waitForCount(predicate: (f: Frame) => boolean, count: number, timeoutMs = 10000): Promise<Frame[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const matching = this.frames.filter(predicate);
      if (matching.length >= count) return matching;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`timed out: ${matching.length}/${count} frames`);
      await this.waitFor(predicate, remaining, this.frames.length).catch(() => undefined);
    }
  }

  /** Stops waiting for anything (their promises reject). */
  dropWaiters(): void {
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(new Error('no longer waiting'));
    }
    this.waiters = [];
  }

  /** Calls `listener` with every frame received from now on. */
  onFrame(listener: (f: Frame) => void): void {
    this.listeners.push(listener);
  }

  sendRaw(data: string | Buffer, binary = false): void {
    this.socket.send(data, { binary });
  }

  /** Sends an action with a fresh id; resolves with its `ack` or `error` frame. */
  async request(action: Record<string, unknown>, timeoutMs = 5000): Promise<Frame> {
    const id = (action.id as string | undefined) ?? `r${++this.seq}`;
    const frame = { ...action, id };
    const reply = this.waitFor((f) => (f.type === 'ack' || f.type === 'error') && f.id === id, timeoutMs, this.frames.length);
    this.sendRaw(this.encoding === 'msgpack' ? pack(frame) : JSON.stringify(frame), this.encoding === 'msgpack');
    return reply;
  }

  /**
   * Sends one message per content to `chatId`, `inFlight` at a time, and resolves with their acks
   * in order; rejects naming the code of any reply that is not an ack. Bounded because the node's
   * load shedder may refuse part of a larger burst on a slow machine (common/limits), which a test
   * that needs every message stored must not depend on.
   */
  async sendAll(chatId: string, contents: string[], inFlight = 16): Promise<Frame[]> {
    const replies: Frame[] = new Array(contents.length);
    let next = 0;
    const worker = async () => {
      while (next < contents.length) {
        const i = next++;
        replies[i] = await this.request({ type: 'message.send', chatId, content: contents[i] });
      }
    };
    await Promise.all(Array.from({ length: Math.min(inFlight, contents.length) }, worker));
    const refused = replies.find((r) => r.type !== 'ack');
    if (refused) throw new Error(`a send was answered ${refused.type} ${refused.code ?? ''}: ${refused.message ?? ''}`);
    return replies;
  }

  waitClosed(): Promise<{ code: number; reason: string }> {
    if (this.closed) return Promise.resolve(this.closed);
    return new Promise((resolve) => this.closeWaiters.push(resolve));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const done = this.waitClosed();
    this.socket.close();
    await done;
  }
}

/**
 * What becomes of a socket opened on `nodeUrl` with this JWT: `ready` (then closed by us), `closed
 * <code>`, the upgrade's `refused <status>`, or nothing within 3 s.
 */
export function socketFate(nodeUrl: string, jwt: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${nodeUrl.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(jwt)}`);
    socket.on('message', (data) => {
      if ((JSON.parse(String(data)) as { type?: string }).type === 'ready') {
        resolve('ready');
        socket.close();
      }
    });
    socket.on('close', (code) => resolve(`closed ${code}`));
    socket.on('unexpected-response', (_req, res) => resolve(`refused ${res.statusCode}`));
    socket.on('error', () => undefined);
    setTimeout(() => resolve('nothing within 3 s'), 3000).unref();
  });
}
