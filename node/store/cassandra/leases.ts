import cassandra from 'cassandra-driver';
import { BackendUnavailableError, OutcomeUnknownError } from '../../../common/index.ts';
import { applied, num, opt, timedOut, type Cql } from '../../../common/cassandra/index.ts';
import { FencedError, type ChatHead, type ChatWriters, type WriterId } from '../types.ts';
import { settleTail, writeAgain, type InDoubtPut } from './unknown-outcomes.ts';

/** How long a hold lasts and how far ahead it takes numbers; documented in the README. */
export interface HoldTiming {
  ttlSeconds: number;
  marginMs: number;
  minRemainingMs: number;
  renewBelowMs: number;
  minReserve: number;
  maxReserve: number;
  /** The most new messages one fenced put writes: what a claim reads back (unknown-outcomes.ts). */
  putWindow: number;
}

export const HOLD: Readonly<HoldTiming> = Object.freeze({
  /** TTL of the `writer` cell: a crashed node's chats are free again at most this long after its last renewal. */
  ttlSeconds: 4,
  /**
   * How much sooner than the cell's expiry its holder stops trusting it. Cassandra counts a TTL in
   * whole seconds from when it applied the write (so up to 1 s sooner than from when we sent it),
   * and node and database clocks may run at slightly different rates.
   */
  marginMs: 1500,
  /** A write waits for a renewal when less than this is left of the hold (a write must land inside it). */
  minRemainingMs: 500,
  /** A renewal starts in the background once less than this is left: about once a second for a busy chat. */
  renewBelowMs: 1500,
  /**
   * Numbers (seqs and revisions) taken ahead of the head at a claim or renewal: twice what the chat
   * used since the last renewal, within these bounds. They bound what a crashed writer makes the
   * next one skip, and a burst beyond them waits for a renewal.
   */
  minReserve: 64,
  maxReserve: 4096,
  putWindow: 256,
});

/** This instance's hold on one chat. */
export interface Hold {
  readonly appId: string;
  readonly chatId: string;
  epoch: number;
  /** The head as this writer moved it: what its next fenced put must name. */
  head: ChatHead;
  /** The numbers taken in the store: every seq and revision this writer writes is at most these. */
  taken: ChatHead;
  /** The head at the last claim or renewal: how fast numbers go, and so how many to take. */
  renewedAt: ChatHead;
  /** performance.now() until which the hold is trusted. */
  validUntil: number;
  renewing: Promise<void> | undefined;
  /** Writes in flight, so a release waits for them. */
  readonly inflight: Set<Promise<unknown>>;
  /** A write failed or its outcome is unknown: its numbers may be used in the store. */
  unsettled: boolean;
  /** Puts whose outcome is unknown, written again before this hold writes or looks up a key. */
  readonly inDoubt: InDoubtPut[];
  /** After a claim: the previous writer's numbers taken, whose tail is settled before anything else. */
  tail: number | undefined;
  settling: Promise<void> | undefined;
  releasing: Promise<void> | undefined;
}

const key = (appId: string, chatId: string) => `${appId}/${chatId}`;
const maxHead = (a: ChatHead, b: ChatHead): ChatHead => ({ seq: Math.max(a.seq, b.seq), rev: Math.max(a.rev, b.rev) });
const encodeWriter = (w: WriterId) => JSON.stringify([w.id, w.address ?? null]);
function decodeWriter(text: string | undefined): WriterId | undefined {
  if (text === undefined) return undefined;
  try {
    const [id, address] = JSON.parse(text) as [string, string | null];
    return address ? { id, address } : { id };
  } catch {
    return { id: text };
  }
}

interface Stored {
  epoch: number | undefined;
  writer: WriterId | undefined;
  taken: ChatHead;
  /** The columns as stored (null when never written), for compare-and-sets on them. */
  columns: { seq: number | null; rev: number | null };
}

/**
 * Which node writes each chat, on Cassandra: a lease in static columns of the chat's members
 * partition (`writer_epoch`, `writer` with a TTL, and `seq_taken`/`rev_taken`, the numbers taken).
 *
 * Protocol. A node claims a chat by compare-and-set when no writer holds it (`writer` is null:
 * released, or expired), moving `writer_epoch` to e+1 and taking `minReserve` numbers beyond the head
 * it found. It renews by compare-and-set on `writer_epoch = e` (renewing the TTL and taking more
 * numbers when its head nears them), in the background while it keeps writing, so a busy chat
 * costs one compare-and-set a second and none per message. It releases (writer null, numbers
 * taken lowered to its exact head once every write of its has settled) when its actor goes.
 * Message rows are then written without any compare-and-set; membership writes carry the
 * condition `writer_epoch = e` in their own compare-and-set (see chats.ts).
 *
 * Safety: no two writers number the same chat, and nothing a writer acknowledges is hidden from
 * the next.
 * 1. Epochs are totally ordered by the compare-and-sets (Paxos) on one partition; a claim needs
 *    `writer` null, and a renewal or a fenced membership write needs the writer's own epoch, so at
 *    most one writer's renewals and membership writes succeed at a time, and a writer whose chat was
 *    taken over learns it at its next renewal.
 * 2. A writer acknowledges a message write only if the write completed (at LOCAL_QUORUM) while its
 *    hold was valid: before `validUntil`, which is the send time of its last successful claim or
 *    renewal plus the TTL minus `marginMs`; or, failing that, if a renewal succeeds after the write
 *    completed (then no other epoch began before it did). Cassandra expires the `writer` cell no
 *    sooner than the TTL after applying it, and applying it comes after we sent it, so while
 *    `validUntil` has not passed on our clock no claim can succeed, given that our clock and the
 *    database's advance at rates within `marginMs` per TTL of each other. (The assumption Cassandra
 *    itself makes for TTLs and write timestamps: keep clocks synchronized with NTP.)
 * 3. A new writer claims after that, and reads the chat afterwards at LOCAL_QUORUM, so it sees
 *    every acknowledged write of the previous one. It numbers from the numbers taken, which bound
 *    everything the previous writer wrote or may still write (it writes beyond them only after a
 *    renewal that moved them), so even a write of the previous writer still in flight can never
 *    collide with a new number. Those numbers are skipped: seqs increase but may skip.
 * 4. A release lowers the numbers taken only to the writer's exact head, after all its writes have
 *    settled successfully; a clean handover skips nothing.
 */
export class CassandraLeases implements ChatWriters {
  private readonly holds = new Map<string, Hold>();
  private readonly claiming = new Map<string, Promise<Hold>>();

  constructor(
    private readonly db: Cql,
    private readonly ks: string,
    private named: WriterId,
    private readonly timing: Readonly<HoldTiming> = HOLD,
  ) {}

  get self(): WriterId {
    return this.named;
  }

  /** The most new messages one fenced put may write (what a claim reads back). */
  get putWindow(): number {
    return this.timing.putWindow;
  }

  announce(self: WriterId): void {
    this.named = { ...self };
  }

  /** The hold this instance has on the chat, if it has one it has not lost or started to release. */
  held(appId: string, chatId: string): Hold | undefined {
    const hold = this.holds.get(key(appId, chatId));
    return hold && !hold.releasing ? hold : undefined;
  }

  /**
   * A hold that lets a write go out now: claimed if this instance has none, renewed first if too
   * little of it is left, renewed in the background if it is getting short.
   */
  async writable(appId: string, chatId: string): Promise<Hold> {
    const k = key(appId, chatId);
    for (;;) {
      const existing = this.holds.get(k);
      if (existing?.releasing) {
        await existing.releasing;
        continue;
      }
      const hold = existing ?? (await this.claim(appId, chatId));
      const left = hold.validUntil - performance.now();
      if (left < this.timing.minRemainingMs) await this.renew(hold);
      else if (left < this.timing.renewBelowMs) void this.renew(hold).catch(() => undefined);
      if (hold.tail !== undefined || hold.inDoubt.length > 0) await this.settleHold(hold);
      if (this.holds.get(k) === hold && !hold.releasing) return hold;
    }
  }

  /**
   * Takes the chat and makes definite every earlier write of it whose outcome was unknown (see
   * unknown-outcomes.ts), so that a lookup by idempotency key that follows finds a message that
   * landed. The chat's writer calls it before such a lookup.
   */
  async settle(appId: string, chatId: string): Promise<void> {
    await this.writable(appId, chatId);
  }

  /** Settles the previous writer's tail after a claim, then writes this hold's in-doubt puts again (one at a time). */
  private settleHold(hold: Hold): Promise<void> {
    hold.settling ??= (async () => {
      if (hold.tail !== undefined) {
        await settleTail(this.db, this.ks, hold.appId, hold.chatId, hold.tail, this.timing.putWindow);
        hold.tail = undefined;
      }
      while (hold.inDoubt.length > 0) {
        await this.write(hold, () => writeAgain(this.db, hold.inDoubt[0]!));
        hold.inDoubt.shift();
      }
    })().finally(() => {
      hold.settling = undefined;
    });
    return hold.settling;
  }

  /** Takes numbers up to at least `upTo` before anything beyond the current ones is written. */
  async cover(hold: Hold, upTo: ChatHead): Promise<void> {
    while (upTo.seq > hold.taken.seq || upTo.rev > hold.taken.rev) await this.renew(hold);
  }

  /**
   * Runs a write of `hold`'s chat; resolves once it is known to have landed while the hold was
   * valid. When it fails, the write may still have landed: with `redo` (a put that can be written
   * again whole, see unknown-outcomes.ts) the hold keeps it to write it again before anything
   * else, and the caller gets OutcomeUnknownError.
   */
  async write<T>(hold: Hold, run: () => Promise<T>, redo?: InDoubtPut): Promise<T> {
    const pending = run();
    hold.inflight.add(pending);
    try {
      const result = await pending;
      const completedAt = performance.now();
      // Past the hold's time: only a renewal sent after the write completed, and still finding our
      // epoch, proves no one took over before it did (one already in flight may have been applied
      // before; its success counts only if the validity it gives covers the completion).
      for (let round = 0; completedAt >= hold.validUntil && round < 2; round++) {
        await this.renew(hold).catch((error: unknown) => {
          throw new BackendUnavailableError('chat ownership (lost while writing)', { cause: error });
        });
      }
      if (completedAt >= hold.validUntil) throw new BackendUnavailableError('chat ownership (unconfirmed after a write)');
      return result;
    } catch (error) {
      hold.unsettled = true;
      if (!redo) throw error;
      hold.inDoubt.push(redo);
      throw new OutcomeUnknownError('cassandra', { cause: error });
    } finally {
      hold.inflight.delete(pending);
    }
  }

  /** The chat's head: this instance's when it holds the chat, else the numbers taken in the store. */
  async head(appId: string, chatId: string): Promise<ChatHead> {
    const hold = this.held(appId, chatId);
    if (hold && hold.validUntil > performance.now()) return hold.head;
    const stored = (await this.read(appId, chatId)).taken;
    return hold ? maxHead(hold.head, stored) : stored;
  }

  /** Raises the numbers taken in the store to at least `upTo` (unfenced writes), and this instance's head. */
  async raise(appId: string, chatId: string, upTo: ChatHead): Promise<void> {
    const hold = this.held(appId, chatId);
    if (hold) hold.head = maxHead(hold.head, upTo);
    for (let attempt = 0; attempt < 20; attempt++) {
      const stored = await this.read(appId, chatId);
      if (stored.taken.seq >= upTo.seq && stored.taken.rev >= upTo.rev) return;
      const next = maxHead(stored.taken, upTo);
      const result = await this.db.execute(
        `UPDATE ${this.ks}.chat_members SET seq_taken = ?, rev_taken = ? WHERE app_id = ? AND chat_id = ? IF seq_taken = ? AND rev_taken = ?`,
        [next.seq, next.rev, appId, chatId, stored.columns.seq, stored.columns.rev],
      ).catch((error: unknown) => (timedOut(error) ? undefined : Promise.reject(error)));
      if (result && applied(result)) return;
    }
    throw new BackendUnavailableError('chat head (contended)');
  }

  async release(appId: string, chatId: string): Promise<void> {
    const k = key(appId, chatId);
    const hold = this.holds.get(k);
    if (!hold) return;
    if (hold.releasing) return hold.releasing;
    hold.releasing = (async () => {
      await Promise.allSettled([...hold.inflight]);
      await hold.renewing?.catch(() => undefined);
      const exact = hold.unsettled ? undefined : hold.head;
      try {
        await this.db.execute(
          exact
            ? `UPDATE ${this.ks}.chat_members SET writer = null, seq_taken = ?, rev_taken = ? WHERE app_id = ? AND chat_id = ? IF writer_epoch = ?`
            : `UPDATE ${this.ks}.chat_members SET writer = null WHERE app_id = ? AND chat_id = ? IF writer_epoch = ?`,
          exact ? [exact.seq, exact.rev, appId, chatId, hold.epoch] : [appId, chatId, hold.epoch],
        );
      } catch {
        // Not released: the hold simply times out.
      } finally {
        this.holds.delete(k);
      }
    })();
    return hold.releasing;
  }

  /** Releases every hold (shutdown). */
  async releaseAll(): Promise<void> {
    await Promise.all([...this.holds.values()].map((h) => this.release(h.appId, h.chatId)));
  }

  /** Drops a hold that a fenced write found lost, and says who holds the chat now. */
  async lost(hold: Hold): Promise<FencedError> {
    if (this.holds.get(key(hold.appId, hold.chatId)) === hold) this.holds.delete(key(hold.appId, hold.chatId));
    const stored = await this.read(hold.appId, hold.chatId);
    return new FencedError(hold.appId, hold.chatId, stored.taken, stored.writer);
  }

  private async read(appId: string, chatId: string, serial = false): Promise<Stored> {
    const options = serial ? { consistency: cassandra.types.consistencies.localSerial } : {};
    const row = (await this.db.execute(`SELECT writer_epoch, writer, seq_taken, rev_taken FROM ${this.ks}.chat_members WHERE app_id = ? AND chat_id = ? LIMIT 1`, [appId, chatId], options)).first();
    const n = (name: string) => (row && row.get(name) !== null && row.get(name) !== undefined ? num(row, name) : undefined);
    const [seq, rev] = [n('seq_taken'), n('rev_taken')];
    return { epoch: n('writer_epoch'), writer: decodeWriter(row ? opt(row, 'writer') : undefined), taken: { seq: seq ?? 0, rev: rev ?? 0 }, columns: { seq: seq ?? null, rev: rev ?? null } };
  }

  private claim(appId: string, chatId: string): Promise<Hold> {
    const k = key(appId, chatId);
    let pending = this.claiming.get(k);
    if (!pending) {
      pending = this.claimOnce(appId, chatId).finally(() => this.claiming.delete(k));
      this.claiming.set(k, pending);
    }
    return pending;
  }

  private async claimOnce(appId: string, chatId: string): Promise<Hold> {
    /** What our last compare-and-set tried, when its outcome was unknown (it timed out). */
    let tried: { epoch: number; from: ChatHead; taken: ChatHead } | undefined;
    for (let attempt = 1; ; attempt++) {
      const stored = await this.read(appId, chatId, attempt > 1);
      if (stored.writer && stored.writer.id !== this.self.id) throw new FencedError(appId, chatId, stored.taken, stored.writer);
      if (stored.writer) {
        // Ours already: a claim of ours whose answer was lost. If it is the one we just tried, we
        // know the head it started from; otherwise start past its numbers. Its time is unknown: renew.
        const ours = tried && tried.epoch === stored.epoch && tried.taken.seq === stored.taken.seq && tried.taken.rev === stored.taken.rev;
        return this.adopt(this.newHold(appId, chatId, stored.epoch!, ours ? tried!.from : stored.taken, stored.taken, 0));
      }
      const epoch = (stored.epoch ?? 0) + 1;
      const taken = { seq: stored.taken.seq + this.timing.minReserve, rev: stored.taken.rev + this.timing.minReserve };
      const sentAt = performance.now();
      try {
        const result = await this.db.batch([
          { query: `UPDATE ${this.ks}.chat_members SET writer_epoch = ?, seq_taken = ?, rev_taken = ? WHERE app_id = ? AND chat_id = ? IF writer_epoch = ? AND writer = null`, params: [epoch, taken.seq, taken.rev, appId, chatId, stored.epoch ?? null] },
          { query: `UPDATE ${this.ks}.chat_members USING TTL ${this.timing.ttlSeconds} SET writer = ? WHERE app_id = ? AND chat_id = ?`, params: [encodeWriter(this.self), appId, chatId] },
        ]);
        tried = undefined;
        // The hold starts from the numbers the store had taken: the previous writer's exact head
        // after a clean release, its reservation otherwise (then those numbers are skipped).
        if (applied(result)) return this.adopt(this.newHold(appId, chatId, epoch, stored.taken, taken, sentAt + this.timing.ttlSeconds * 1000 - this.timing.marginMs));
      } catch (error) {
        // Unknown outcome: the next round reads (serially) whether we are the writer now.
        if (!timedOut(error) || attempt >= 5) throw error;
        tried = { epoch, from: stored.taken, taken };
        continue;
      }
      if (attempt >= 5) throw new BackendUnavailableError('chat ownership (contended)');
    }
  }

  /** A hold just claimed, from `head`: the previous writer's tail up to it is settled before use. */
  private newHold(appId: string, chatId: string, epoch: number, head: ChatHead, taken: ChatHead, validUntil: number): Hold {
    return { appId, chatId, epoch, head, taken, renewedAt: head, validUntil, renewing: undefined, inflight: new Set(), unsettled: false, inDoubt: [], tail: head.seq, settling: undefined, releasing: undefined };
  }

  private async adopt(hold: Hold): Promise<Hold> {
    this.holds.set(key(hold.appId, hold.chatId), hold);
    if (hold.validUntil <= performance.now()) await this.renew(hold);
    return hold;
  }

  /** Renews the hold (one at a time) and takes numbers well beyond its head; FencedError once lost. */
  renew(hold: Hold): Promise<void> {
    if (!hold.renewing) {
      hold.renewing = this.renewOnce(hold).finally(() => {
        hold.renewing = undefined;
      });
    }
    return hold.renewing;
  }

  private async renewOnce(hold: Hold): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const ahead = (used: number) => Math.min(this.timing.maxReserve, Math.max(this.timing.minReserve, 2 * used));
      const head = hold.head;
      const taken = maxHead(hold.taken, { seq: head.seq + ahead(head.seq - hold.renewedAt.seq), rev: head.rev + ahead(head.rev - hold.renewedAt.rev) });
      const sentAt = performance.now();
      let result: cassandra.types.ResultSet;
      try {
        result = await this.db.batch([
          { query: `UPDATE ${this.ks}.chat_members SET seq_taken = ?, rev_taken = ? WHERE app_id = ? AND chat_id = ? IF writer_epoch = ?`, params: [taken.seq, taken.rev, hold.appId, hold.chatId, hold.epoch] },
          { query: `UPDATE ${this.ks}.chat_members USING TTL ${this.timing.ttlSeconds} SET writer = ? WHERE app_id = ? AND chat_id = ?`, params: [encodeWriter(this.self), hold.appId, hold.chatId] },
        ]);
      } catch (error) {
        // Unknown outcome; trying again is safe (the same epoch, the same or more numbers).
        if (!timedOut(error) || attempt >= 5) throw error;
        continue;
      }
      if (!applied(result)) throw await this.lost(hold);
      hold.taken = taken;
      hold.renewedAt = head;
      hold.validUntil = Math.max(hold.validUntil, sentAt + this.timing.ttlSeconds * 1000 - this.timing.marginMs);
      return;
    }
  }
}
