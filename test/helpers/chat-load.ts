import { client } from './http.ts';
import { WsClient, type Frame } from './ws.ts';

export interface StoredView {
  messageId: string;
  seq: number;
  content: string;
}

/** The whole history of a chat, oldest first, read page by page from `nodeUrl`. */
export async function fullHistory(nodeUrl: string, chatId: string, jwt: string): Promise<StoredView[]> {
  const api = client(nodeUrl);
  const out: StoredView[] = [];
  let cursor = '';
  for (;;) {
    const page = await api.get(`/api/messages/getMessages/${chatId}?size=100${cursor ? `&lastMessage=${cursor}` : ''}`, jwt);
    if (page.status !== 200) throw new Error(`history from ${nodeUrl}: ${page.status} ${JSON.stringify(page.body)}`);
    out.push(...page.body.messages);
    if (page.body.messages.length < 100) return out.reverse();
    cursor = page.body.messages.at(-1).messageId;
  }
}

/**
 * A member following one chat over WebSocket the way a careful client does: it resumes from its
 * last seq when its socket drops (on the next live node), and when it sees a gap (a `resume.gap`,
 * or a live seq past the next one) it pages the missing messages from history. It records what
 * the server sent on each socket, so a test can check that no socket got a seq twice.
 */
export class FollowingMember {
  /** seq → message id, from live events, replays and history repairs. */
  readonly seen = new Map<number, string>();
  /** Per socket: the seqs the server sent, in arrival order. */
  readonly sessions: number[][] = [];
  reconnects = 0;
  repairs = 0;
  /** The node URL of each socket opened, in order. */
  readonly urls: string[] = [];
  private socket: WsClient | undefined;
  private stopped = false;
  private repairing: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    private readonly jwt: string,
    private readonly chatId: string,
    /** The node URLs to try, in order of preference; a dead one is skipped. */
    private readonly nodes: () => string[],
  ) {}

  /** The newest seq seen: where the member resumes from (older gaps are repaired from history). */
  get last(): number {
    return this.seen.size === 0 ? 0 : Math.max(...this.seen.keys());
  }


  async connect(): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      for (const url of this.nodes()) {
        try {
          const resume = this.seen.size > 0 ? { [this.chatId]: this.last } : undefined;
          const session: number[] = [];
          this.sessions.push(session);
          const socket = await WsClient.connect(url, this.jwt, resume ? { resume } : {});
          this.socket = socket;
          this.urls.push(url);
          socket.onFrame((f) => this.onFrame(f, session, url));
          for (const f of socket.frames) this.onFrame(f, session, url);
          void socket.waitClosed().then(() => {
            if (this.stopped || this.socket !== socket) return;
            this.reconnects++;
            void this.connect();
          });
          return;
        } catch {
          /* that node is down: the next one */
        }
      }
      await new Promise((r) => setTimeout(r, 200));
      if (attempt > 100) throw new Error(`${this.name} cannot reconnect`);
    }
  }

  private onFrame(f: Frame, session: number[], url: string): void {
    if (f.chatId !== this.chatId) return;
    if (f.type === 'message.new') {
      session.push(f.seq);
      if (f.seq > 1 && !this.seen.has(f.seq - 1)) this.repair(url);
      this.seen.set(f.seq, f.message.messageId);
    } else if (f.type === 'resume.gap') this.repair(url);
  }

  /** Pages history for whatever is missing below the newest seq seen. */
  private repair(url: string): void {
    this.repairs++;
    this.repairing = this.repairing.then(async () => {
      for (const m of await fullHistory(url, this.chatId, this.jwt).catch(() => [])) this.seen.set(m.seq, m.messageId);
    });
  }

  /**
   * Waits until this member holds every one of `seqs` (the stored ones: a node killed between
   * taking numbers and writing their messages leaves numbers unused), repairing from `url` if needed.
   */
  async caughtUp(seqs: number[], url: string, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const complete = () => seqs.every((s) => this.seen.has(s));
    while (Date.now() < deadline) {
      await this.repairing;
      if (complete()) return true;
      await new Promise((r) => setTimeout(r, 250));
      if (!complete() && Date.now() + 2000 > deadline) this.repair(url);
    }
    return complete();
  }

  /** Seqs a single socket was sent more than once (live and replay together). */
  duplicates(): number[] {
    const dups: number[] = [];
    for (const s of this.sessions) {
      const seen = new Set<number>();
      for (const seq of s) (seen.has(seq) ? dups : (seen.add(seq), [])).push(seq);
    }
    return dups;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.socket?.close();
  }
}

/**
 * A sender that sends `content` once per call over REST with an idempotency key, retrying on any
 * failure (a dead node, a 503) against the next node until acknowledged or `timeoutMs` passes.
 */
export async function sendUntilAcked(nodes: () => string[], jwt: string, chatId: string, content: string, key: string, timeoutMs: number): Promise<{ messageId: string; seq: number } | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; Date.now() < deadline; i++) {
    const list = nodes();
    const url = list[i % list.length]!;
    try {
      const r = await client(url).post(`/api/messages/${chatId}`, { content, idempotencyKey: key }, jwt);
      if (r.status === 201 || r.status === 200) return { messageId: r.body.message.messageId, seq: r.body.message.seq };
      if (r.status < 500 && r.status !== 429) throw new Error(`send refused: ${r.status} ${JSON.stringify(r.body)}`);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('send refused')) throw error;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}
