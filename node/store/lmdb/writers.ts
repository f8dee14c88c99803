import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { FencedError, type ChatHead, type ChatWriters, type WriterId } from '../types.ts';

/** How long a chat stays held by an instance that wrote it and then went quiet. */
const HOLD_MS = 6_000;
/** Most chat heads remembered per environment (about 150 bytes each); past it, all are forgotten. */
const MAX_HEADS = 100_000;

interface Held {
  writer: WriterId;
  until: number;
}

/**
 * The holds and heads of every LMDB environment of this process, by path. An environment is
 * written by one process (the standalone deployment), so they live in that process's memory:
 * instances opened on one path share them, and a restart starts with none.
 */
const byPath = new Map<string, { holds: Map<string, Held>; heads: Map<string, ChatHead> }>();

/**
 * Which store instance writes each chat, for the embedded store. Every fenced write takes (or
 * checks) the hold inside the LMDB write transaction that writes, so the check and the write are
 * one atomic step, as is the head check of a fenced put: no time assumption is needed here, and
 * holds only let a second instance tell that a chat is being written by another (and by whom).
 */
export class LmdbWriters implements ChatWriters {
  private readonly holds: Map<string, Held>;
  /**
   * Each chat's head row ('h') as the write transactions of this environment left it, so that a
   * fenced put checks its fence without reading the row: set inside the transaction that writes
   * the row (transactions run one after another, in order, in this process), and dropped when
   * that transaction fails, so that the row is read again. A chat not here is read from the store.
   */
  private readonly heads: Map<string, ChatHead>;
  /** The messages' head, for FencedError; set by the store once its tables exist. */
  head: (appId: string, chatId: string) => ChatHead = () => ({ seq: 0, rev: 0 });

  constructor(
    path: string,
    private named: WriterId = { id: randomUUID() },
  ) {
    const key = resolve(path);
    let shared = byPath.get(key);
    if (!shared) byPath.set(key, (shared = { holds: new Map(), heads: new Map() }));
    this.holds = shared.holds;
    this.heads = shared.heads;
    // Between a close and an open another process may have written the environment: an instance
    // opening starts the heads afresh (a head not remembered is read from the store).
    this.heads.clear();
  }

  /** Inside a write transaction: the head row of the chat is now `head`. */
  wroteHead(appId: string, chatId: string, head: ChatHead): void {
    if (this.heads.size >= MAX_HEADS) this.heads.clear();
    this.heads.set(`${appId}/${chatId}`, head);
  }

  /** The head row of the chat as the last write transaction left it, if remembered. */
  knownHead(appId: string, chatId: string): ChatHead | undefined {
    return this.heads.get(`${appId}/${chatId}`);
  }

  /** A transaction that wrote the chat's head failed: its row is read again next time. */
  forgetHead(appId: string, chatId: string): void {
    this.heads.delete(`${appId}/${chatId}`);
  }

  get self(): WriterId {
    return this.named;
  }

  announce(self: WriterId): void {
    this.named = { ...self };
  }

  /** Inside a write transaction: holds the chat for this instance, or throws FencedError naming its holder. */
  take(appId: string, chatId: string): void {
    const k = `${appId}/${chatId}`;
    const held = this.holds.get(k);
    const now = Date.now();
    if (held && held.writer.id !== this.self.id && held.until > now) throw new FencedError(appId, chatId, this.head(appId, chatId), held.writer);
    this.holds.set(k, { writer: this.self, until: now + HOLD_MS });
  }

  async release(appId: string, chatId: string): Promise<void> {
    const k = `${appId}/${chatId}`;
    if (this.holds.get(k)?.writer.id === this.self.id) this.holds.delete(k);
  }

  /** Nothing is ever in doubt here: a transaction commits or not. */
  async settle(): Promise<void> {}

  /** Hands back every chat this instance holds (on close). */
  releaseAll(): void {
    for (const [k, held] of this.holds) if (held.writer.id === this.self.id) this.holds.delete(k);
  }
}
