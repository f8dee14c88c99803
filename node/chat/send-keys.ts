import type { StoredMessage } from '../store/index.ts';

/** What a send with an idempotency key finds: its first send still being written, or stored. */
export type EarlierSend<R> = { pending: Promise<R> } | { stored: StoredMessage } | undefined;

/** A store lookup of a key, started before the send's turn in the chat's queue. */
export interface KeyLookup {
  readonly found: Promise<StoredMessage | undefined>;
  /** The chat's highest seq taken when the lookup started: a key stored after it is in memory. */
  readonly since: number;
}

export interface SendKeysDeps {
  /** The chat's unknown outcomes made definite, then the message sent with this key, if any (the store). */
  lookup: (userId: string, clientKey: string) => Promise<StoredMessage | undefined>;
  /** A message of the chat by id (its actor's cache, else the store). */
  message: (id: string) => Promise<StoredMessage | undefined>;
}

const keyOf = (userId: string, clientKey: string) => `${userId}\u0000${clientKey}`;

/**
 * The idempotency keys of one chat's sends, as its actor (the chat's single writer) knows them:
 * the sends being written, and the last `max` stored by this actor, newest last. The store is
 * the fallback for keys older than that (stored before this actor loaded, or dropped from the
 * bound).
 *
 * Why a lookup may start outside the chat's serial queue: every send with a key this actor
 * writes is in `pending` from the moment it takes its seq until it is durable, then in `recent`
 * until `max` newer ones push it out. So a lookup that starts once a key is in neither, and is
 * checked at the send's turn in the queue against the keys stored since (`since`), sees every
 * message with the key: the earlier ones in the store (durable before it started, or settled by
 * `lookup`), the later ones in memory. Only when a key stored after the lookup started has been
 * dropped since (over `max` keyed sends within one turn) is it looked up again, in the queue.
 * So a keyed send costs the chat's queue no store round trip, and a retry of a recent send no
 * store read at all.
 */
export class SendKeys<R> {
  private readonly pending = new Map<string, Promise<R>>();
  /** Key → message id, in seq order (stored in durable order). */
  private readonly recent = new Map<string, { id: string; seq: number }>();
  /** The highest seq whose key was dropped from `recent` (0: none). */
  private droppedThrough = 0;

  constructor(
    private readonly max: number,
    private readonly deps: SendKeysDeps,
  ) {}

  /** Sends with a key being written. */
  get writing(): number {
    return this.pending.size;
  }

  /** The first send with this key, still being written. */
  inFlight(userId: string, clientKey: string): Promise<R> | undefined {
    return this.pending.get(keyOf(userId, clientKey));
  }

  /** Starts the store lookup of a key this actor does not know (none when it does). */
  prefetch(userId: string, clientKey: string, assignedSeq: number): KeyLookup | undefined {
    const k = keyOf(userId, clientKey);
    if (this.pending.has(k) || this.recent.has(k)) return undefined;
    const found = this.deps.lookup(userId, clientKey);
    // Awaited at the send's turn, unless the send is refused before it (then its outcome is moot).
    found.catch(() => undefined);
    return { found, since: assignedSeq };
  }

  /** At the send's turn in the queue: the send this key names, if any. */
  async earlier(userId: string, clientKey: string, lookup: KeyLookup | undefined): Promise<EarlierSend<R>> {
    const k = keyOf(userId, clientKey);
    const pending = this.pending.get(k);
    if (pending) return { pending };
    const recent = this.recent.get(k);
    if (recent) {
      const stored = await this.deps.message(recent.id);
      if (stored) return { stored };
    }
    const found = lookup && lookup.since >= this.droppedThrough ? await lookup.found : await this.deps.lookup(userId, clientKey);
    return found ? { stored: found } : undefined;
  }

  /** A send with a key took its seq: its result until it is durable (or fails). */
  writingNow(userId: string, clientKey: string, result: Promise<R>): void {
    const k = keyOf(userId, clientKey);
    this.pending.set(k, result);
    void result.catch(() => undefined).finally(() => this.pending.delete(k));
  }

  /** A message with a key is durable (called in seq order, before its send's result settles). */
  stored(m: StoredMessage): void {
    if (m.clientKey === undefined) return;
    this.recent.set(keyOf(m.senderId, m.clientKey), { id: m.id, seq: m.seq });
    if (this.recent.size <= this.max) return;
    const [oldest, at] = this.recent.entries().next().value!;
    this.recent.delete(oldest);
    this.droppedThrough = Math.max(this.droppedThrough, at.seq);
  }
}
