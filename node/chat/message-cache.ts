import type { StoredMessage } from '../store/index.ts';

/**
 * The messages a chat's actor keeps in memory: the last `capacity` messages written (durably),
 * least recently written first, and the states of changes still being written (later changes of
 * the same message build on them). Replays and replies read from here before the store.
 *
 * Guarantee: `coversChangesAfter(rev)` is true only if every message written after revision `rev`
 * is in memory, so a replay of changes may be served from memory alone.
 */
export class MessageCache {
  private readonly recent = new Map<string, StoredMessage>();
  private readonly unflushed = new Map<string, StoredMessage>();
  /** Every message written after this revision is in `recent` (it grows as entries are evicted). */
  private coversAfterRev: number;

  constructor(
    private readonly capacity: number,
    /** The chat's revision when the cache started empty (or was filled from the store). */
    startRev: number,
  ) {
    this.coversAfterRev = startRev;
  }

  /** The current state of a message: a change not yet durable, else the last durable write. */
  get(id: string): StoredMessage | undefined {
    return this.unflushed.get(id) ?? this.recent.get(id);
  }

  /** The last durable write of a message, if kept. */
  durableState(id: string): StoredMessage | undefined {
    return this.recent.get(id);
  }

  /** A change on its way to the store: later changes of the message read this state. */
  pending(m: StoredMessage): void {
    this.unflushed.set(m.id, m);
  }

  /** A write is durable: it is the message's state from now on. */
  remember(m: StoredMessage): void {
    if (this.unflushed.get(m.id) === m) this.unflushed.delete(m.id);
    this.recent.delete(m.id);
    this.recent.set(m.id, m);
    if (this.recent.size <= this.capacity) return;
    const oldest = this.recent.entries().next().value;
    if (!oldest) return;
    this.recent.delete(oldest[0]);
    this.coversAfterRev = Math.max(this.coversAfterRev, oldest[1].rev ?? 0);
  }

  /** Kept messages with seq in (afterSeq, upToSeq], in seq order. */
  bySeq(afterSeq: number, upToSeq: number): StoredMessage[] {
    return [...this.recent.values()].filter((m) => m.seq > afterSeq && m.seq <= upToSeq).sort((a, b) => a.seq - b.seq);
  }

  /** Kept messages whose latest write has a revision in (afterRev, upToRev], in revision order. */
  byRev(afterRev: number, upToRev: number): StoredMessage[] {
    return [...this.recent.values()].filter((m) => (m.rev ?? 0) > afterRev && (m.rev ?? 0) <= upToRev).sort((a, b) => (a.rev ?? 0) - (b.rev ?? 0));
  }

  coversChangesAfter(rev: number): boolean {
    return rev >= this.coversAfterRev;
  }

  /** The kept message with the highest seq at most `upToSeq`. */
  newest(upToSeq: number): StoredMessage | undefined {
    let newest: StoredMessage | undefined;
    for (const m of this.recent.values()) if (m.seq <= upToSeq && (!newest || m.seq > newest.seq)) newest = m;
    return newest;
  }
}
