import WebSocket from 'ws';

/**
 * The nemesis suite's clients: senders that retry each send with its idempotency key until it is
 * acknowledged, and members that follow chats over WebSocket the way a careful client does. Both
 * record everything the checker needs; neither repairs anything it was not told to.
 */

export type Frame = Record<string, any> & { type: string };

/** Milliseconds on a monotonic clock, shared by every record of a run. */
export const now = (): number => performance.now();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A chat user the clients act as; `jwt` is read at each use (a long run signs users in again). */
export interface NemesisUser {
  name: string;
  userId: string;
  jwt: string;
}

/** One REST call with a deadline: the status and parsed body, or a thrown network error or timeout. */
export async function rest(url: string, method: string, path: string, jwt: string, body: unknown, timeoutMs: number): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${jwt}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/**
 * A WebSocket connection of the suite: JSON frames, handed to `onFrame` from the first one (no
 * window in which a frame is received but not seen), requests matched to their ack or error by
 * id with a deadline, an opening bounded in time (a paused or cut-off node never answers the
 * upgrade), and a liveness check by ping.
 */
export class WsConn {
  private readonly pending = new Map<string, { resolve: (f: Frame) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private ids = 0;
  private heartbeat: NodeJS.Timeout | undefined;
  private lastHeard = now();
  closedWith: { code: number; reason: string } | undefined;
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(
    readonly url: string,
    private readonly ws: WebSocket,
    onFrame: (f: Frame) => void,
  ) {
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        this.closedWith = { code, reason: reason.toString() };
        clearInterval(this.heartbeat);
        for (const [, p] of this.pending) {
          clearTimeout(p.timer);
          p.reject(new Error(`socket closed (${code})`));
        }
        this.pending.clear();
        resolve(this.closedWith);
      });
    });
    ws.on('error', () => undefined);
    ws.on('pong', () => (this.lastHeard = now()));
    ws.on('message', (data: Buffer) => {
      this.lastHeard = now();
      let frame: Frame;
      try {
        frame = JSON.parse(data.toString('utf8')) as Frame;
      } catch {
        return;
      }
      if ((frame.type === 'ack' || frame.type === 'error') && typeof frame.id === 'string') {
        const p = this.pending.get(frame.id);
        if (p) {
          clearTimeout(p.timer);
          this.pending.delete(frame.id);
          p.resolve(frame);
        }
      }
      onFrame(frame);
    });
  }

  /** Opens a socket (with `resume` points when given) and resolves at its `ready` frame, or rejects within `timeoutMs`. */
  static open(nodeUrl: string, jwt: string, options: { resume?: Record<string, number>; timeoutMs?: number; onFrame?: (f: Frame) => void } = {}): Promise<WsConn> {
    const timeoutMs = options.timeoutMs ?? 4000;
    let url = `${nodeUrl.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(jwt)}`;
    if (options.resume && Object.keys(options.resume).length > 0) url += `&resume=${Object.entries(options.resume).map(([c, s]) => `${c}:${s}`).join(',')}`;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { handshakeTimeout: timeoutMs });
      let ready = false;
      const conn = new WsConn(nodeUrl, ws, (f) => {
        if (!ready && f.type === 'ready') {
          ready = true;
          clearTimeout(timer);
          resolve(conn);
        }
        options.onFrame?.(f);
      });
      const fail = (why: string) => {
        if (ready) return;
        clearTimeout(timer);
        ws.terminate();
        reject(new Error(why));
      };
      const timer = setTimeout(() => fail(`no ready frame from ${nodeUrl} within ${timeoutMs} ms`), timeoutMs);
      ws.once('unexpected-response', (_req, res) => fail(`upgrade refused by ${nodeUrl}: ${res.statusCode}`));
      ws.once('error', (error) => fail(`${nodeUrl}: ${error.message}`));
      void conn.closed.then((c) => fail(`closed ${c.code} before ready`));
    });
  }

  get open(): boolean {
    return this.closedWith === undefined && this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends an action; resolves with its ack or error frame, rejects on timeout or close. */
  request(action: Record<string, unknown>, timeoutMs: number): Promise<Frame> {
    const id = `q${++this.ids}`;
    return new Promise((resolve, reject) => {
      if (!this.open) return reject(new Error('socket not open'));
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.ws.send(JSON.stringify({ ...action, id }));
    });
  }

  /**
   * Pings every `everyMs`; when nothing (frame or pong) was heard for `deadMs`, the socket is taken
   * for dead: terminated, and `onDead` called. A client that waits for TCP to notice a node that
   * stopped answering waits for minutes.
   */
  watch(everyMs: number, deadMs: number, onDead: () => void): void {
    this.lastHeard = now();
    this.heartbeat = setInterval(() => {
      if (!this.open) return clearInterval(this.heartbeat);
      if (now() - this.lastHeard > deadMs) {
        clearInterval(this.heartbeat);
        onDead();
        this.ws.terminate();
        return;
      }
      try {
        this.ws.ping();
      } catch {
        /* closing */
      }
    }, everyMs);
  }

  terminate(): void {
    this.ws.terminate();
  }

  async close(): Promise<void> {
    if (this.closedWith) return;
    this.ws.close();
    const timer = setTimeout(() => this.ws.terminate(), 2000);
    await this.closed;
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// Senders

/** How one attempt of a send ended. */
export type AttemptOutcome =
  | 'ack'
  /** A definite refusal: nothing was stored, a retry would be refused again. */
  | 'refused'
  /** OUTCOME_UNKNOWN, UNAVAILABLE, BEFORE_SEND_FAILED, INTERNAL, another 5xx, a network error or a timeout: retried with the same key. */
  | 'unknown'
  /** RATE_LIMITED (429): retried after the wait it names. */
  | 'limited';

export interface Attempt {
  at: number;
  node: string;
  outcome: AttemptOutcome;
  /** The error code, the HTTP status or the network error. */
  detail: string;
  ms: number;
}

export interface SendRecord {
  key: string;
  chatId: string;
  content: string;
  sender: string;
  senderId: string;
  via: 'rest' | 'ws';
  /** When the first attempt started (a message can be stored no sooner). */
  firstAt: number;
  ackAt?: number;
  ack?: { seq: number; messageId: string };
  /** The code of a definite refusal. */
  refused?: string;
  attempts: Attempt[];
}

const UNKNOWN_CODES = new Set(['OUTCOME_UNKNOWN', 'UNAVAILABLE', 'BEFORE_SEND_FAILED', 'INTERNAL']);

/** What a REST answer or WebSocket error frame means for a send. */
function classify(status: number, code: string | undefined): AttemptOutcome {
  if (status === 200 || status === 201) return 'ack';
  if (status === 429 || code === 'RATE_LIMITED') return 'limited';
  if (status >= 500 || (code !== undefined && UNKNOWN_CODES.has(code))) return 'unknown';
  return 'refused';
}

export interface SenderOptions {
  user: NemesisUser;
  via: 'rest' | 'ws';
  /** The chats it sends to, in turn. */
  chats: string[];
  /** Node URLs in order of preference (a load balancer's view: the nodes it believes live). */
  nodes: () => string[];
  /** One new send every `intervalMs`, while fewer than `maxInFlight` of its sends are unresolved. */
  intervalMs: number;
  maxInFlight: number;
  /** How long one attempt waits for its answer. */
  attemptTimeoutMs: number;
  /** Prefix of keys and contents: which phase sent it. */
  tag: string;
}

/**
 * Sends at a steady rate (open loop, bounded in flight), each send with its own idempotency key
 * and retried with it on an unknown outcome, against the next node each time, until acknowledged,
 * refused, or the deadline the phase sets passes.
 */
export class Sender {
  readonly records: SendRecord[] = [];
  /** Ticks on which no send started because `maxInFlight` were unresolved. */
  skipped = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = new Set<Promise<void>>();
  private n = 0;
  private deadline = Infinity;
  private socket: Promise<WsConn> | undefined;
  private socketNode = 0;

  constructor(private readonly o: SenderOptions) {}

  get name(): string {
    return this.o.user.name;
  }

  start(): void {
    // Senders start spread over one interval, so the load is steady rather than in waves.
    const first = Math.random() * this.o.intervalMs;
    this.timer = setTimeout(() => {
      this.tick();
      this.timer = setInterval(() => this.tick(), this.o.intervalMs);
    }, first);
  }

  /** Starts no new send; unresolved ones keep retrying until `deadline` (a now() value). */
  stopNew(deadline: number): void {
    clearTimeout(this.timer);
    clearInterval(this.timer);
    this.deadline = deadline;
  }

  /** Resolves when every send has an outcome (acknowledged, refused, or given up at the deadline). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
    const s = this.socket;
    this.socket = undefined;
    if (s) await s.then((c) => c.close(), () => undefined);
  }

  /** One send to `chatId` now, retried like the others; resolves with its record once settled. */
  async sendOne(chatId: string, key: string): Promise<SendRecord> {
    const record = this.newRecord(chatId, key);
    await this.drive(record);
    return record;
  }

  private newRecord(chatId: string, key: string): SendRecord {
    const record: SendRecord = { key, chatId, content: `${key} from ${this.o.user.name}`, sender: this.o.user.name, senderId: this.o.user.userId, via: this.o.via, firstAt: now(), attempts: [] };
    this.records.push(record);
    return record;
  }

  private tick(): void {
    if (this.inFlight.size >= this.o.maxInFlight) {
      this.skipped++;
      return;
    }
    const k = this.n++;
    const chatId = this.o.chats[k % this.o.chats.length]!;
    const record = this.newRecord(chatId, `${this.o.tag}-${this.o.user.name}-${k}`);
    const p = this.drive(record).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async drive(record: SendRecord): Promise<void> {
    let backoff = 100;
    for (let i = 0; now() < this.deadline; i++) {
      const nodes = this.o.nodes();
      if (nodes.length === 0) {
        await sleep(200);
        continue;
      }
      const started = now();
      let outcome: AttemptOutcome;
      let detail: string;
      let node = '';
      let waitMs = 0;
      try {
        if (this.o.via === 'rest') {
          node = nodes[i % nodes.length]!;
          const r = await rest(node, 'POST', `/api/messages/${record.chatId}`, this.o.user.jwt, { content: record.content, idempotencyKey: record.key }, this.o.attemptTimeoutMs);
          detail = String(r.body?.code ?? r.status);
          outcome = classify(r.status, r.body?.code);
          if (outcome === 'ack') record.ack = { seq: r.body.message.seq, messageId: r.body.message.messageId };
          if (outcome === 'limited') waitMs = 1000 * Number(r.headers.get('retry-after') ?? 1);
        } else {
          const conn = await this.ws(nodes);
          node = conn.url;
          const f = await conn.request({ type: 'message.send', chatId: record.chatId, content: record.content, idempotencyKey: record.key }, this.o.attemptTimeoutMs).catch((error: Error) => {
            // No answer on this socket: take it for lost and open the next one on another node.
            if (this.socket) void this.socket.then((c) => (c === conn ? this.dropSocket(conn) : undefined), () => undefined);
            throw error;
          });
          detail = f.type === 'ack' ? 'ack' : String(f.code);
          outcome = f.type === 'ack' ? 'ack' : classify(0, f.code);
          if (outcome === 'ack') record.ack = { seq: f.result.message.seq, messageId: f.result.message.messageId };
          if (outcome === 'limited') waitMs = 1000 * Number(f.retryAfter ?? 1);
        }
      } catch (error) {
        outcome = 'unknown';
        detail = error instanceof Error ? (error.name === 'TimeoutError' ? 'timeout' : error.message.slice(0, 80)) : String(error);
      }
      record.attempts.push({ at: started, node, outcome, detail, ms: now() - started });
      if (outcome === 'ack') {
        record.ackAt = now();
        return;
      }
      if (outcome === 'refused') {
        record.refused = detail;
        return;
      }
      await sleep(Math.max(waitMs, backoff * (0.5 + Math.random())));
      backoff = Math.min(backoff * 2, 1000);
    }
  }

  /** The sender's socket, opened on the next preferred node when it has none. */
  private ws(nodes: string[]): Promise<WsConn> {
    if (this.socket) return this.socket;
    const url = nodes[this.socketNode++ % nodes.length]!;
    const opening = WsConn.open(url, this.o.user.jwt, { timeoutMs: this.o.attemptTimeoutMs });
    this.socket = opening;
    opening.then(
      (c) => void c.closed.then(() => this.socket === opening && (this.socket = undefined)),
      () => this.socket === opening && (this.socket = undefined),
    );
    return opening;
  }

  private dropSocket(conn: WsConn): void {
    conn.terminate();
  }
}

// ---------------------------------------------------------------------------------------------
// Members

/** A message.new a socket was sent. */
export interface Delivery {
  seq: number;
  messageId: string;
  content: string;
  replay: boolean;
  at: number;
}

/** One socket of a member, and what it was sent. */
export interface Session {
  node: string;
  openedAt: number;
  closedAt?: number;
  /** Why it ended: the close code, `dead` (no pong), or `stopped`. */
  end?: string;
  /** The seq per chat it resumed from. */
  resumeFrom: Record<string, number>;
  /** Per chat, every message.new in arrival order. */
  deliveries: Record<string, Delivery[]>;
  /** resume.gap frames: told to page. */
  gaps: { chatId: string; fromSeq: number; toSeq: number; at: number }[];
  resumedAt?: number;
}

/** How a member came to hold a seq. */
export type HeldVia = 'live' | 'replay' | 'page';

/** A history page a member read, and why. */
export interface PageRead {
  chatId: string;
  reason: 'resume.gap' | 'live-gap';
  fromSeq: number;
  toSeq: number;
  at: number;
  /** Seqs it found in that range that the member did not hold yet. */
  filled: number[];
  /** Each history page read for it: the node, when, and the seqs it returned (newest, oldest, count). */
  reads: { node: string; at: number; newest?: number; oldest?: number; count: number }[];
}

export interface MemberOptions {
  user: NemesisUser;
  chats: string[];
  /** Node URLs to connect to, in order: the first is its home. */
  nodes: () => string[];
  pingEveryMs?: number;
  deadAfterMs?: number;
  pageTimeoutMs?: number;
}

/**
 * A member following chats over WebSocket. When its socket drops (or stops answering pings) it
 * reconnects to the next node with `resume` from the newest seq it holds of each chat; it pages
 * history ONLY for a `resume.gap` range or a live seq gap (a message.new past the next seq its
 * socket should get), and only the seqs of that range it lacks. It records every socket, every
 * frame of its chats, and how it got each seq (live, replay or page).
 */
export class Member {
  readonly sessions: Session[] = [];
  readonly held = new Map<string, Map<number, { messageId: string; via: HeldVia }>>();
  readonly pages: PageRead[] = [];
  /** Page reads that failed (and were retried elsewhere). */
  pageErrors = 0;
  private conn: WsConn | undefined;
  private stopped = false;
  private paging: Promise<void> = Promise.resolve();
  private nextNode = 0;
  private connecting: Promise<void> | undefined;

  constructor(private readonly o: MemberOptions) {
    for (const c of o.chats) this.held.set(c, new Map());
  }

  get name(): string {
    return this.o.user.name;
  }

  /** The newest seq held of a chat: where a reconnect resumes from. */
  high(chatId: string): number {
    let h = 0;
    for (const seq of this.held.get(chatId)!.keys()) if (seq > h) h = seq;
    return h;
  }

  /** Connects (resolves once a socket is ready); reconnects by itself until stopped. */
  connect(): Promise<void> {
    this.connecting ??= this.loop().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async loop(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      const nodes = this.o.nodes();
      if (nodes.length > 0) {
        const url = nodes[this.nextNode++ % nodes.length]!;
        const resume = Object.fromEntries(this.o.chats.map((c) => [c, this.high(c)]));
        const session: Session = { node: url, openedAt: now(), resumeFrom: resume, deliveries: Object.fromEntries(this.o.chats.map((c) => [c, []])), gaps: [] };
        const expect = new Map(this.o.chats.map((c) => [c, resume[c]! + 1]));
        try {
          const conn = await WsConn.open(url, this.o.user.jwt, { resume, onFrame: (f) => this.onFrame(f, session, expect) });
          if (this.stopped) {
            await conn.close();
            return;
          }
          this.sessions.push(session);
          this.conn = conn;
          conn.watch(this.o.pingEveryMs ?? 1000, this.o.deadAfterMs ?? 5000, () => (session.end ??= 'dead'));
          void conn.closed.then((c) => {
            session.closedAt = now();
            session.end ??= this.stopped ? 'stopped' : String(c.code);
            if (this.conn === conn) this.conn = undefined;
            if (!this.stopped) void this.connect();
          });
          return;
        } catch {
          /* that node cannot be reached now: the next one */
        }
      }
      await sleep(Math.min(100 * 2 ** Math.min(attempt, 4), 1000));
    }
  }

  private onFrame(f: Frame, session: Session, expect: Map<string, number>): void {
    if (f.type === 'resumed') session.resumedAt = now();
    if (typeof f.chatId !== 'string' || !expect.has(f.chatId)) return;
    const chatId = f.chatId;
    if (f.type === 'message.new') {
      const seq = f.seq as number;
      const replay = f.replay === true;
      session.deliveries[chatId]!.push({ seq, messageId: f.message.messageId, content: f.message.content, replay, at: now() });
      const next = expect.get(chatId)!;
      const held = this.held.get(chatId)!;
      if (!held.has(seq)) held.set(seq, { messageId: f.message.messageId, via: replay ? 'replay' : 'live' });
      // A seq past the next one this socket should get: a live gap, paged (what it lacks of it).
      if (seq > next) this.page(chatId, next, seq - 1, 'live-gap', f.message.messageId);
      if (seq + 1 > next) expect.set(chatId, seq + 1);
    } else if (f.type === 'resume.gap') {
      session.gaps.push({ chatId, fromSeq: f.fromSeq, toSeq: f.toSeq, at: now() });
      this.page(chatId, f.fromSeq, f.toSeq, 'resume.gap', undefined);
      if (f.toSeq + 1 > expect.get(chatId)!) expect.set(chatId, f.toSeq + 1);
    }
  }

  /** Pages history for the seqs of [fromSeq, toSeq] it lacks, from a message above the range when it knows one. */
  private page(chatId: string, fromSeq: number, toSeq: number, reason: PageRead['reason'], above: string | undefined): void {
    const read: PageRead = { chatId, reason, fromSeq, toSeq, at: now(), filled: [], reads: [] };
    this.pages.push(read);
    this.paging = this.paging.then(async () => {
      const held = this.held.get(chatId)!;
      const lacking = () => {
        for (let s = fromSeq; s <= toSeq; s++) if (!held.has(s)) return true;
        return false;
      };
      for (let attempt = 0; lacking() && !this.stopped; attempt++) {
        const nodes = this.o.nodes();
        const url = this.conn?.url ?? nodes[attempt % Math.max(1, nodes.length)];
        if (!url) {
          await sleep(200);
          continue;
        }
        try {
          let cursor = above ?? '';
          for (;;) {
            const r = await rest(url, 'GET', `/api/messages/getMessages/${chatId}?size=100${cursor ? `&lastMessage=${cursor}` : ''}`, this.o.user.jwt, undefined, this.o.pageTimeoutMs ?? 5000);
            if (r.status !== 200) throw new Error(`history ${r.status}`);
            const messages = r.body.messages as { seq: number; messageId: string }[];
            read.reads.push({ node: url, at: now(), newest: messages[0]?.seq, oldest: messages.at(-1)?.seq, count: messages.length });
            for (const m of messages) {
              if (m.seq >= fromSeq && m.seq <= toSeq && !held.has(m.seq)) {
                held.set(m.seq, { messageId: m.messageId, via: 'page' });
                read.filled.push(m.seq);
              }
            }
            const oldest = messages.at(-1);
            if (!oldest || messages.length < 100 || oldest.seq <= fromSeq) break;
            cursor = oldest.messageId;
          }
          return; // what it still lacks of the range is not stored (seqs skipped after a lapsed hold)
        } catch {
          this.pageErrors++;
          await sleep(300);
        }
      }
    });
  }

  /** Resolves once every page read started so far is done. */
  async pagesDone(): Promise<void> {
    for (let p = this.paging; ; p = this.paging) {
      await p;
      if (p === this.paging) return;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.connecting?.catch(() => undefined);
    const conn = this.conn;
    if (conn) {
      const session = this.sessions.at(-1);
      if (session) session.end ??= 'stopped';
      await conn.close();
    }
    await this.pagesDone();
  }
}
