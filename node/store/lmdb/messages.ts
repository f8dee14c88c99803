import { toBufferKey } from 'ordered-binary';
import { latestOfEach, neverWritten } from '../batches.ts';
import { bucketOf } from '../buckets.ts';
import { chatOfLog } from '../thread-log.ts';
import { FencedError, type ChatHead, type HeadFence, type MessageStore, type OutboxEvent, type StoredMessage } from '../types.ts';
import { END, type Tables } from './shared.ts';
import type { LmdbWriters } from './writers.ts';
import type { LmdbOutbox } from './outbox.ts';
import type { LmdbSearch } from './search.ts';
import { indexed } from '../search-terms.ts';
import { messageRecord, storedMessage, storedMessageOrNone } from './message-record.ts';
import { packedPlace, packedString } from './packed-values.ts';

/** Most buckets an instance remembers as indexed (about 100 bytes each). */
const MAX_KNOWN_BUCKETS = 50_000;
/** Most chats whose key bytes an instance keeps (about 200 bytes each). */
const CHAT_KEYS = 10_000;

/**
 * Keys: ['m', app, chat, bucket, id] → the message as a record (message-record.ts; partition app+chat+bucket, clustered by id);
 * ['b', app, chat, bucket] → true (the chat's non-empty buckets); ['s', app, chat, seq] → [bucket, id]
 * (this value, and those of 'r' and 'k', written as packed-values.ts makes them);
 * ['k', app, chat, sender, clientKey] → id; ['u', app, chat, uploadId] → id of the message carrying
 * that attachment; ['n', app, chat, user, seq] → true for each member a stored message mentions;
 * ['r', app, chat, rev] → [bucket, id] for the latest
 * revision of each message only; ['h', app, chat] → ChatHead, where the last fenced put left the head.
 */
export class LmdbMessages implements MessageStore {
  /**
   * Buckets whose index entry a committed put of this instance wrote: a put into one of them
   * writes no entry again (one put less per batch). Bounded: past it, forgotten, which costs
   * only that put again.
   */
  private readonly buckets = new Set<string>();
  /** See chatKey. */
  private readonly chatKeys = new Map<string, Uint8Array>();

  constructor(
    private readonly t: Tables,
    private readonly writers: LmdbWriters,
    private readonly outbox: LmdbOutbox,
    private readonly search: LmdbSearch,
  ) {
    writers.head = (appId, chatId) => this.head(appId, chatId);
  }

  /** A fenced put holds the chat, checks and moves the head in the transaction that writes its messages. */
  async put(messages: StoredMessage[], fence?: HeadFence, events?: OutboxEvent[]): Promise<void> {
    if (messages.length === 0) return;
    const first = messages[0]!;
    if (fence && messages.some((m) => m.appId !== first.appId || m.chatId !== first.chatId)) throw new Error('a fenced put writes one chat');
    const buckets = new Set<string>();
    let indexRecord: string | undefined;
    const written = this.t.root.transaction(() => {
      const toIndex: StoredMessage[] = [];
      if (fence) {
        this.writers.take(first.appId, first.chatId);
        // The head row alone, once written: every put that moves an index past it moves it too.
        // Remembered as the last transaction left it (LmdbWriters.heads), so most puts read nothing.
        const found =
          this.writers.knownHead(first.appId, first.chatId) ?? (this.t.db.get(['h', first.appId, first.chatId]) as ChatHead | undefined) ?? this.head(first.appId, first.chatId);
        if (found.seq !== fence.from.seq || found.rev !== fence.from.rev) throw new FencedError(first.appId, first.chatId, this.head(first.appId, first.chatId));
        const to = { seq: fence.to.seq, rev: fence.to.rev };
        this.t.db.put(['h', first.appId, first.chatId], to);
        this.writers.wroteHead(first.appId, first.chatId, to);
      } else {
        this.raiseHeads(messages);
      }
      for (const m of latestOfEach(messages)) {
        const bucket = bucketOf(m.id);
        const chat = this.chatKey(m.appId, m.chatId);
        const previous = neverWritten(m, fence) ? undefined : storedMessageOrNone(this.t.db.get(['m', m.appId, m.chatId, bucket, m.id]));
        if (previous?.rev !== undefined && previous.rev !== m.rev) this.t.db.remove(['r', chat, previous.rev]);
        if (indexed(m, previous)) toIndex.push(m);
        if (m.rev !== undefined) this.t.db.put(['r', chat, m.rev], packedPlace(bucket, m.id));
        this.t.db.put(['m', chat, bucket, m.id], messageRecord(m));
        const bucketKey = `${m.appId}\u0000${m.chatId}\u0000${bucket}`;
        if (!this.buckets.has(bucketKey) && !buckets.has(bucketKey)) {
          buckets.add(bucketKey);
          this.t.db.put(['b', m.appId, m.chatId, bucket], true);
        }
        this.t.db.put(['s', chat, m.seq], packedPlace(bucket, m.id));
        if (m.clientKey !== undefined) this.t.db.put(['k', chat, m.senderId, m.clientKey], packedString(m.id));
        // A reply's files are held in its chat's name, as a message of the chat's are (thread-log.ts).
        for (const a of m.attachments ?? []) this.t.db.put(['u', m.chatId === chatOfLog(m.chatId) ? chat : this.chatKey(m.appId, chatOfLog(m.chatId)), a.id], m.id);
        for (const userId of m.mentions ?? []) {
          if (m.deletedAt === undefined) this.t.db.put(['n', chat, userId, m.seq], true);
          else this.t.db.remove(['n', chat, userId, m.seq]);
        }
      }
      indexRecord = this.search.pending(toIndex);
      // The events of this write, in its transaction: both are durable, or neither.
      if (events?.length) this.outbox.write(this.writers.self.id, events, true);
    });
    try {
      await written;
    } catch (error) {
      // Whatever its callback remembered did not happen: the rows are read again.
      for (const m of messages) this.writers.forgetHead(m.appId, m.chatId);
      if (indexRecord !== undefined) this.search.aborted(indexRecord);
      throw error;
    }
    // Before the put resolves: a search begun after it finds these messages (LmdbSearch.settled).
    if (indexRecord !== undefined) this.search.committed(indexRecord);
    // Committed: their index entries exist (an entry is never removed while its chat exists).
    if (this.buckets.size + buckets.size > MAX_KNOWN_BUCKETS) this.buckets.clear();
    for (const b of buckets) this.buckets.add(b);
  }

  /**
   * The key bytes of (app, chat), made once per chat: ordered-binary writes a byte array element
   * of a key as it is, and a key's elements with a 0 between them, so ['s', chatKey, seq] is the
   * same bytes as ['s', app, chat, seq], and every read with the plain key finds it (the store
   * conformance suite reads all of them so). A put then copies those 73 bytes instead of encoding
   * 72 characters one by one: that encoding was 10% of a node's busy time on the sends bench.
   * Bounded: past CHAT_KEYS, forgotten, which costs only their encoding again.
   */
  private chatKey(appId: string, chatId: string): Uint8Array {
    const k = `${appId}\u0000${chatId}`;
    let bytes = this.chatKeys.get(k);
    if (!bytes) {
      if (this.chatKeys.size >= CHAT_KEYS) this.chatKeys.clear();
      this.chatKeys.set(k, (bytes = toBufferKey([appId, chatId])));
    }
    return bytes;
  }

  /**
   * Inside an unfenced put: the head row of each chat it writes (where one exists) raised to its
   * numbers, so the row stays at least every number indexed and a fenced put's check reads it alone.
   */
  private raiseHeads(messages: StoredMessage[]): void {
    const tops = new Map<string, { appId: string; chatId: string; seq: number; rev: number }>();
    for (const m of messages) {
      const k = `${m.appId}\u0000${m.chatId}`;
      const top = tops.get(k) ?? { appId: m.appId, chatId: m.chatId, seq: 0, rev: 0 };
      tops.set(k, { ...top, seq: Math.max(top.seq, m.seq), rev: Math.max(top.rev, m.rev ?? 0) });
    }
    for (const { appId, chatId, seq, rev } of tops.values()) {
      const stored = this.t.db.get(['h', appId, chatId]) as ChatHead | undefined;
      if (!stored || (seq <= stored.seq && rev <= stored.rev)) continue;
      const raised = { seq: Math.max(seq, stored.seq), rev: Math.max(rev, stored.rev) };
      this.t.db.put(['h', appId, chatId], raised);
      this.writers.wroteHead(appId, chatId, raised);
    }
  }

  async get(appId: string, chatId: string, messageId: string): Promise<StoredMessage | undefined> {
    return this.stored(appId, chatId, messageId);
  }

  /** A message as stored, read at once (in the current transaction, when there is one). */
  stored(appId: string, chatId: string, messageId: string): StoredMessage | undefined {
    return storedMessageOrNone(this.t.db.get(['m', appId, chatId, bucketOf(messageId), messageId]));
  }

  async getMany(appId: string, chatId: string, ids: readonly string[]): Promise<(StoredMessage | undefined)[]> {
    return Promise.all(ids.map((id) => this.get(appId, chatId, id)));
  }

  async pageBackward(appId: string, chatId: string, beforeId: string | undefined, limit: number): Promise<StoredMessage[]> {
    const out: StoredMessage[] = [];
    const startBucket = beforeId === undefined ? undefined : bucketOf(beforeId);
    const buckets = this.t.db.getKeys({
      start: startBucket === undefined ? ['b', appId, chatId, END] : ['b', appId, chatId, startBucket],
      end: ['b', appId, chatId],
      reverse: true,
    });
    for (const key of buckets) {
      const bucket = key[3] as number;
      const fromInside = beforeId !== undefined && bucket === startBucket;
      const range = this.t.db.getRange({
        start: fromInside ? ['m', appId, chatId, bucket, beforeId] : ['m', appId, chatId, bucket, END],
        end: ['m', appId, chatId, bucket],
        reverse: true,
      });
      for (const { key: k, value } of range) {
        if (fromInside && k[4] === beforeId) continue;
        out.push(storedMessage(value));
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  async afterSeq(appId: string, chatId: string, afterSeq: number, limit: number): Promise<StoredMessage[]> {
    return this.indexedAfter('s', appId, chatId, afterSeq, limit);
  }

  async lastSeq(appId: string, chatId: string): Promise<number> {
    return this.head(appId, chatId).seq;
  }

  async lastRev(appId: string, chatId: string): Promise<number> {
    return this.head(appId, chatId).rev;
  }

  /** The head: a fenced put is one transaction, so it never names numbers that were not written. */
  async newest(appId: string, chatId: string): Promise<ChatHead> {
    return this.head(appId, chatId);
  }

  /** Where the last fenced put left the head, or the indexes where they are higher (only in a chat never written by a fenced put). */
  head(appId: string, chatId: string): ChatHead {
    const stored = this.t.db.get(['h', appId, chatId]) as ChatHead | undefined;
    return {
      seq: Math.max(stored?.seq ?? 0, this.lastIndexed('s', appId, chatId)),
      rev: Math.max(stored?.rev ?? 0, this.lastIndexed('r', appId, chatId)),
    };
  }

  async changedSince(appId: string, chatId: string, afterRev: number, limit: number): Promise<StoredMessage[]> {
    return this.indexedAfter('r', appId, chatId, afterRev, limit);
  }

  /** Messages of a seq ('s') or revision ('r') index after `after`, in index order. */
  private indexedAfter(index: 's' | 'r', appId: string, chatId: string, after: number, limit: number): StoredMessage[] {
    const out: StoredMessage[] = [];
    for (const { value } of this.t.db.getRange({ start: [index, appId, chatId, after + 1], end: [index, appId, chatId, Number.MAX_SAFE_INTEGER], limit })) {
      const [bucket, id] = value as [number, string];
      const m = storedMessageOrNone(this.t.db.get(['m', appId, chatId, bucket, id]));
      if (m) out.push(m);
    }
    return out;
  }

  /** The highest number in a seq or revision index (0 for none). */
  private lastIndexed(index: 's' | 'r', appId: string, chatId: string): number {
    for (const key of this.t.db.getKeys({ start: [index, appId, chatId, Number.MAX_SAFE_INTEGER], end: [index, appId, chatId], reverse: true, limit: 1 })) {
      return key[3] as number;
    }
    return 0;
  }

  async attachmentHolder(appId: string, chatId: string, uploadId: string): Promise<string | undefined> {
    return this.t.db.get(['u', appId, chatId, uploadId]) as string | undefined;
  }

  async mentionsBetween(appId: string, chatId: string, userId: string, afterSeq: number, upToSeq: number, limit: number): Promise<number[]> {
    const seqs: number[] = [];
    for (const key of this.t.db.getKeys({ start: ['n', appId, chatId, userId, upToSeq], end: ['n', appId, chatId, userId, afterSeq], reverse: true, limit })) seqs.push(key[4] as number);
    return seqs;
  }

  async byClientKey(appId: string, chatId: string, senderId: string, clientKey: string): Promise<StoredMessage | undefined> {
    const id = this.t.db.get(['k', appId, chatId, senderId, clientKey]) as string | undefined;
    return id === undefined ? undefined : this.get(appId, chatId, id);
  }
}
