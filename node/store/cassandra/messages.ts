import { num, str, type Cql } from '../../../common/cassandra/index.ts';
import { seqOfMessageId } from '../message-id.ts';
import { latestOfEach } from '../batches.ts';
import { FencedError, type ChatHead, type HeadFence, type MessageStore, type OutboxEvent, type StoredMessage } from '../types.ts';
import type { CassandraLeases } from './leases.ts';
import type { CassandraOutbox } from './outbox.ts';
import { BLOCK, blockOf, MessageWrites, readMessage, type MessageRow } from './message-rows.ts';
import { newestAtOrBelow } from './unknown-outcomes.ts';
import type { MergeablePut, PutMerger } from './put-merger.ts';
import type { SearchRows } from './search.ts';

const same = (a: ChatHead, b: ChatHead) => a.seq === b.seq && a.rev === b.rev;
const carriesSeq = (m: StoredMessage) => seqOfMessageId(m.id) === m.seq;

/**
 * Messages in `chat_messages`, one row each, partitioned by (app, chat, seq / 1024) and clustered
 * by seq, newest first (see schema.ts). A steady stream of sends costs one batch per group commit
 * of the chat's actor, one row per message (plus its idempotency key row when it has one), and no
 * compare-and-set: the fence is the writer's hold on the chat (leases.ts), checked in memory.
 */
export class CassandraMessages implements MessageStore {
  constructor(
    private readonly db: Cql,
    private readonly ks: string,
    private readonly leases: CassandraLeases,
    private readonly outbox: CassandraOutbox,
    private readonly merger: PutMerger,
    /** The search index's rows of the messages' text (search.ts). */
    private readonly search: SearchRows,
  ) {}

  async put(messages: StoredMessage[], fence?: HeadFence, events?: OutboxEvent[]): Promise<void> {
    if (messages.length === 0) return;
    const first = messages[0]!;
    if (fence && messages.some((m) => m.appId !== first.appId || m.chatId !== first.chatId)) throw new Error('a fenced put writes one chat');
    if (!fence) {
      if (events?.length) await this.outbox.append(this.leases.self.id, events);
      return this.putUnfenced(messages);
    }
    const { appId, chatId } = first;
    if (fence.to.seq - fence.from.seq > this.leases.putWindow) throw new Error(`a fenced put writes at most ${this.leases.putWindow} new messages`);
    const hold = await this.leases.writable(appId, chatId);
    // From here to the first await: the check and the move of the head are one step.
    if (!same(hold.head, fence.from)) throw new FencedError(appId, chatId, hold.head);
    hold.head = { seq: Math.max(hold.head.seq, fence.to.seq), rev: Math.max(hold.head.rev, fence.to.rev) };
    // The events before the messages (written while the previous rows are read): once the messages
    // are written, and the put resolves, their events are durable too. A crash in between leaves
    // events whose change never landed; a recovery drops them by their check (OutboxEvent.check).
    const appended = events?.length ? this.outbox.append(this.leases.self.id, events) : undefined;
    appended?.catch(() => {});
    const writes = new MessageWrites(this.ks, this.search);
    const firstRev = new Map<string, number | undefined>();
    for (const m of messages) if (!firstRev.has(m.id)) firstRev.set(m.id, m.rev);
    const latest = latestOfEach(messages);
    const known = latest.filter((m) => m.seq <= fence.from.seq);
    const previous = await this.rows(appId, chatId, known.map((m) => m.seq));
    for (const m of latest) {
      if (m.seq > fence.from.seq) writes.created(m, firstRev.get(m.id), carriesSeq(m));
      else writes.changed(m, previous.get(m.seq), carriesSeq(m));
    }
    await this.leases.cover(hold, fence.to);
    await appended;
    // Every attempt of this put carries one timestamp, so it can be written again whole when its
    // outcome is unknown (unknown-outcomes.ts): the hold keeps it, the caller gets OutcomeUnknownError.
    // The merger sets it as it sends the put, with other chats' puts of the same turn (put-merger.ts).
    // The index's rows travel apart, with other puts' (put-merger.ts); the put resolves once both landed.
    const put: MergeablePut = { batches: writes.batches({ index: false }), index: writes.indexRows, timestamp: 0 };
    await this.leases.write(hold, () => this.merger.write(put), put);
    this.search.landed(writes.searchKeys);
  }

  /** Written as given: each message's stored row is read first (for its previous revision). */
  private async putUnfenced(messages: StoredMessage[]): Promise<void> {
    const byChat = new Map<string, StoredMessage[]>();
    for (const m of latestOfEach(messages)) {
      const k = `${m.appId}/${m.chatId}`;
      byChat.set(k, [...(byChat.get(k) ?? []), m]);
    }
    await Promise.all([...byChat.values()].map(async (list) => {
      const { appId, chatId } = list[0]!;
      const previous = await this.rows(appId, chatId, list.map((m) => m.seq));
      const writes = new MessageWrites(this.ks, this.search);
      for (const m of list) writes.changed(m, previous.get(m.seq)?.message.id === m.id ? previous.get(m.seq) : undefined, carriesSeq(m));
      await Promise.all(writes.batches({ index: true }).map((b) => this.db.batch(b)));
      this.search.landed(writes.searchKeys);
      await this.leases.raise(appId, chatId, { seq: Math.max(...list.map((m) => m.seq)), rev: Math.max(0, ...list.map((m) => m.rev ?? 0)) });
    }));
  }

  /** The stored rows of some seqs of one chat. */
  private async rows(appId: string, chatId: string, seqs: number[]): Promise<Map<number, MessageRow>> {
    const found = await Promise.all(seqs.map((seq) => this.row(appId, chatId, seq)));
    return new Map(found.filter((r) => r !== undefined).map((r) => [r.message.seq, r]));
  }

  private async row(appId: string, chatId: string, seq: number): Promise<MessageRow | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.chat_messages WHERE app_id = ? AND chat_id = ? AND block = ? AND seq = ?`, [appId, chatId, blockOf(seq), seq])).first();
    return row ? readMessage(row) : undefined;
  }

  /** The seq of a message by its id: carried by the id (checked), or from the id index. */
  private async seqOf(appId: string, chatId: string, id: string): Promise<MessageRow | undefined> {
    const hinted = seqOfMessageId(id);
    if (hinted === undefined) return undefined;
    const direct = await this.row(appId, chatId, hinted);
    if (direct?.message.id === id) return direct;
    const indexed = (await this.db.execute(`SELECT seq FROM ${this.ks}.message_ids WHERE app_id = ? AND chat_id = ? AND id = ?`, [appId, chatId, id])).first();
    if (!indexed) return undefined;
    const row = await this.row(appId, chatId, num(indexed, 'seq'));
    return row?.message.id === id ? row : undefined;
  }

  async get(appId: string, chatId: string, messageId: string): Promise<StoredMessage | undefined> {
    return (await this.seqOf(appId, chatId, messageId))?.message;
  }

  async getMany(appId: string, chatId: string, ids: readonly string[]): Promise<(StoredMessage | undefined)[]> {
    // The seqs the ids carry, one read per block (partition) they fall in; an id whose row is
    // not there (a message stored at another seq than its id says) is looked up alone.
    const byBlock = new Map<number, Set<number>>();
    for (const id of ids) {
      const seq = seqOfMessageId(id);
      if (seq === undefined) continue;
      const seqs = byBlock.get(blockOf(seq)) ?? new Set<number>();
      byBlock.set(blockOf(seq), seqs.add(seq));
    }
    const found = new Map<string, StoredMessage>();
    await Promise.all(
      [...byBlock].map(async ([block, seqs]) => {
        const rows = await this.db.execute(`SELECT * FROM ${this.ks}.chat_messages WHERE app_id = ? AND chat_id = ? AND block = ? AND seq IN ?`, [appId, chatId, block, [...seqs]]);
        for (const r of rows.rows) {
          const { message } = readMessage(r);
          found.set(message.id, message);
        }
      }),
    );
    return Promise.all(ids.map((id) => found.get(id) ?? (seqOfMessageId(id) === undefined ? undefined : this.get(appId, chatId, id))));
  }

  /**
   * Rows of one chat with seq in [from, to] (to ≥ from: ascending; else descending from `from`
   * down to `to`), block by block, until `limit` rows or `keep` has enough. Blocks left empty by
   * skipped numbers cost one read each.
   */
  private async scan(appId: string, chatId: string, from: number, to: number, limit: number, keep: (r: MessageRow) => boolean = () => true): Promise<MessageRow[]> {
    const out: MessageRow[] = [];
    const up = to >= from;
    for (let block = blockOf(from); up ? block <= blockOf(to) : block >= blockOf(to); block += up ? 1 : -1) {
      const [lo, hi] = up ? [from, to] : [to, from];
      const rows = await this.db.execute(
        `SELECT * FROM ${this.ks}.chat_messages WHERE app_id = ? AND chat_id = ? AND block = ? AND seq >= ? AND seq <= ? ORDER BY seq ${up ? 'ASC' : 'DESC'} LIMIT ?`,
        [appId, chatId, block, Math.max(lo, block * BLOCK), Math.min(hi, block * BLOCK + BLOCK - 1), limit - out.length],
      );
      for (const r of rows.rows) {
        const row = readMessage(r);
        if (keep(row)) out.push(row);
      }
      if (out.length >= limit) break;
    }
    return out;
  }

  async pageBackward(appId: string, chatId: string, beforeId: string | undefined, limit: number): Promise<StoredMessage[]> {
    let below: number;
    if (beforeId === undefined) below = (await this.leases.head(appId, chatId)).seq + 1;
    else {
      const cursor = await this.seqOf(appId, chatId, beforeId);
      if (!cursor) return [];
      below = cursor.message.seq;
    }
    if (below <= 1) return [];
    return (await this.scan(appId, chatId, below - 1, 0, limit)).map((r) => r.message);
  }

  async afterSeq(appId: string, chatId: string, afterSeq: number, limit: number): Promise<StoredMessage[]> {
    const head = (await this.leases.head(appId, chatId)).seq;
    if (head <= afterSeq) return [];
    return (await this.scan(appId, chatId, afterSeq + 1, head, limit)).map((r) => r.message);
  }

  async lastSeq(appId: string, chatId: string): Promise<number> {
    return (await this.leases.head(appId, chatId)).seq;
  }

  async lastRev(appId: string, chatId: string): Promise<number> {
    return (await this.leases.head(appId, chatId)).rev;
  }

  /**
   * Read below the head, which may count numbers taken ahead (a node that does not hold the chat
   * sees the writer's reservation): the newest row, and the newest revision of a change or of the
   * newest row's creation. A few reads, for a client told to page (not on the send path).
   */
  async newest(appId: string, chatId: string): Promise<ChatHead> {
    const head = await this.leases.head(appId, chatId);
    const seq = await newestAtOrBelow(this.db, this.ks, appId, chatId, head.seq);
    let rev = 0;
    const newestRow = seq > 0 ? await this.row(appId, chatId, seq) : undefined;
    if (newestRow) rev = newestRow.crev ?? newestRow.message.rev ?? 0;
    for (let block = blockOf(head.rev); block >= 0 && block >= blockOf(rev); block--) {
      const change = (await this.db.execute(`SELECT rev FROM ${this.ks}.message_changes WHERE app_id = ? AND chat_id = ? AND block = ? AND rev <= ? ORDER BY rev DESC LIMIT 1`, [appId, chatId, block, head.rev])).first();
      if (change) {
        rev = Math.max(rev, num(change, 'rev'));
        break;
      }
    }
    return { seq, rev };
  }

  /**
   * Changes come from `message_changes` (each message's latest change, by revision); messages
   * still as first written come from `chat_messages` by seq: their revision of creation (`crev`)
   * grows with their seq, so those created after `afterRev` are the rows from the first seq whose
   * `crev` is beyond it, found by bisection. Rows without `crev` (written unfenced, or of the
   * first layout) are indexed as changes, and come before any row with one.
   */
  async changedSince(appId: string, chatId: string, afterRev: number, limit: number): Promise<StoredMessage[]> {
    const head = await this.leases.head(appId, chatId);
    if (head.rev <= afterRev) return [];
    const [changes, created] = await Promise.all([this.changes(appId, chatId, afterRev, head.rev, limit + 1), this.createdAfter(appId, chatId, afterRev, head.seq, limit + 1)]);
    return [...changes, ...created].sort((a, b) => (a.rev ?? 0) - (b.rev ?? 0)).slice(0, limit);
  }

  private async changes(appId: string, chatId: string, afterRev: number, headRev: number, limit: number): Promise<StoredMessage[]> {
    const out: StoredMessage[] = [];
    for (let block = blockOf(afterRev + 1); block <= blockOf(headRev) && out.length < limit; block++) {
      const rows = (await this.db.execute(`SELECT rev, seq FROM ${this.ks}.message_changes WHERE app_id = ? AND chat_id = ? AND block = ? AND rev > ?`, [appId, chatId, block, afterRev])).rows;
      const found = await Promise.all(rows.map(async (r) => ({ rev: num(r, 'rev'), row: await this.row(appId, chatId, num(r, 'seq')) })));
      // An index row left by a superseded revision (a put that failed half-way) is not reported.
      for (const f of found) if (f.row && f.row.message.rev === f.rev && out.length < limit) out.push(f.row.message);
    }
    return out;
  }

  private async createdAfter(appId: string, chatId: string, afterRev: number, headSeq: number, limit: number): Promise<StoredMessage[]> {
    // The smallest seq whose next row with a recorded crev has crev > afterRev.
    const firstAt = async (seq: number) => (await this.scan(appId, chatId, seq, headSeq, 1))[0];
    const beyond = (r: MessageRow | undefined) => r === undefined || (r.crev !== undefined && r.crev > afterRev);
    let lo = 1;
    let hi = headSeq + 1;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (beyond(await firstAt(mid))) hi = mid;
      else lo = mid + 1;
    }
    if (lo > headSeq) return [];
    const rows = await this.scan(appId, chatId, lo, headSeq, limit, (r) => r.crev !== undefined && r.crev > afterRev && r.message.rev === r.crev);
    return rows.map((r) => r.message);
  }

  async attachmentHolder(appId: string, chatId: string, uploadId: string): Promise<string | undefined> {
    const row = (await this.db.execute(`SELECT message_id FROM ${this.ks}.attachment_holders WHERE app_id = ? AND chat_id = ? AND upload_id = ?`, [appId, chatId, uploadId])).first();
    return row ? str(row, 'message_id') : undefined;
  }

  /** Reads the (at most five) blocks of `chat_mentions` the range spans, newest first, until `limit` seqs are found. */
  async mentionsBetween(appId: string, chatId: string, userId: string, afterSeq: number, upToSeq: number, limit: number): Promise<number[]> {
    const seqs: number[] = [];
    for (let block = blockOf(upToSeq); block >= blockOf(afterSeq + 1) && seqs.length < limit; block--) {
      const rows = await this.db.execute(`SELECT seq FROM ${this.ks}.chat_mentions WHERE app_id = ? AND chat_id = ? AND user_id = ? AND block = ? AND seq > ? AND seq <= ? LIMIT ?`, [appId, chatId, userId, block, afterSeq, upToSeq, limit - seqs.length]);
      for (const row of rows.rows) seqs.push(num(row, 'seq'));
    }
    return seqs;
  }

  /**
   * Finds a message by its sender's idempotency key. A write of the chat whose outcome is unknown
   * may make a message appear later; the chat's writer settles the chat first (ChatWriters.settle).
   */
  async byClientKey(appId: string, chatId: string, senderId: string, clientKey: string): Promise<StoredMessage | undefined> {
    const row = (await this.db.execute(`SELECT seq, id FROM ${this.ks}.send_keys WHERE app_id = ? AND chat_id = ? AND sender_id = ? AND client_key = ?`, [appId, chatId, senderId, clientKey])).first();
    if (!row) return undefined;
    const found = await this.row(appId, chatId, num(row, 'seq'));
    return found?.message.id === str(row, 'id') ? found.message : undefined;
  }
}
