import { latestOfEach, neverWritten } from '../batches.ts';
import { bucketOf } from '../buckets.ts';
import { FencedError, type ChatHead, type HeadFence, type MessageStore, type OutboxEvent, type StoredMessage } from '../types.ts';
import { END, type Tables } from './shared.ts';
import type { LmdbWriters } from './writers.ts';
import type { LmdbOutbox } from './outbox.ts';


/**
 * Keys: ['m', app, chat, bucket, id] → message (partition app+chat+bucket, clustered by id);
 * ['b', app, chat, bucket] → true (the chat's non-empty buckets); ['s', app, chat, seq] → [bucket, id];
 * ['k', app, chat, sender, clientKey] → id; ['r', app, chat, rev] → [bucket, id] for the latest
 * revision of each message only; ['h', app, chat] → ChatHead, where the last fenced put left the head.
 */
export class LmdbMessages implements MessageStore {
  constructor(
    private readonly t: Tables,
    private readonly writers: LmdbWriters,
    private readonly outbox: LmdbOutbox,
  ) {
    writers.head = (appId, chatId) => this.head(appId, chatId);
  }

  /** A fenced put holds the chat, checks and moves the head in the transaction that writes its messages. */
  async put(messages: StoredMessage[], fence?: HeadFence, events?: OutboxEvent[]): Promise<void> {
    if (messages.length === 0) return;
    const first = messages[0]!;
    if (fence && messages.some((m) => m.appId !== first.appId || m.chatId !== first.chatId)) throw new Error('a fenced put writes one chat');
    await this.t.root.transaction(() => {
      if (fence) {
        this.writers.take(first.appId, first.chatId);
        const found = this.head(first.appId, first.chatId);
        if (found.seq !== fence.from.seq || found.rev !== fence.from.rev) throw new FencedError(first.appId, first.chatId, found);
        this.t.db.put(['h', first.appId, first.chatId], { seq: fence.to.seq, rev: fence.to.rev });
      }
      const buckets = new Set<string>();
      for (const m of latestOfEach(messages)) {
        const bucket = bucketOf(m.id);
        const previous = neverWritten(m, fence) ? undefined : (this.t.db.get(['m', m.appId, m.chatId, bucket, m.id]) as StoredMessage | undefined);
        if (previous?.rev !== undefined && previous.rev !== m.rev) this.t.db.remove(['r', m.appId, m.chatId, previous.rev]);
        if (m.rev !== undefined) this.t.db.put(['r', m.appId, m.chatId, m.rev], [bucket, m.id]);
        this.t.db.put(['m', m.appId, m.chatId, bucket, m.id], m);
        const bucketKey = `${m.appId}\u0000${m.chatId}\u0000${bucket}`;
        if (!buckets.has(bucketKey)) {
          buckets.add(bucketKey);
          this.t.db.put(['b', m.appId, m.chatId, bucket], true);
        }
        this.t.db.put(['s', m.appId, m.chatId, m.seq], [bucket, m.id]);
        if (m.clientKey !== undefined) this.t.db.put(['k', m.appId, m.chatId, m.senderId, m.clientKey], m.id);
      }
      // The events of this write, in its transaction: both are durable, or neither.
      if (events?.length) this.outbox.write(this.writers.self.id, events, true);
    });
  }

  async get(appId: string, chatId: string, messageId: string): Promise<StoredMessage | undefined> {
    return this.t.db.get(['m', appId, chatId, bucketOf(messageId), messageId]) as StoredMessage | undefined;
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
        out.push(value as StoredMessage);
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

  /** Where the last fenced put left the head, or the indexes where they are higher (unfenced puts move only them). */
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
      const m = this.t.db.get(['m', appId, chatId, bucket, id]) as StoredMessage | undefined;
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

  async byClientKey(appId: string, chatId: string, senderId: string, clientKey: string): Promise<StoredMessage | undefined> {
    const id = this.t.db.get(['k', appId, chatId, senderId, clientKey]) as string | undefined;
    return id === undefined ? undefined : this.get(appId, chatId, id);
  }
}
