import type { NodeStore, StoredMessage } from '../store/index.ts';
import type { MessageCache } from './message-cache.ts';
import { messageView, type MessageView } from './views.ts';

/** A message's current state and the revision of its latest write. */
export interface ChangedMessage {
  rev: number;
  seq: number;
  message: MessageView;
}

/** What the reads of one chat's actor see: its cache and what it has published. */
export interface ReadSource {
  appId: string;
  chatId: string;
  store: NodeStore;
  cache: () => MessageCache;
  /** The highest seq and revision published: nothing beyond them is read (it is not durable yet). */
  published: () => { seq: number; rev: number };
}

/**
 * The read side of a chat's actor: what a resuming client missed (see replay.ts), from memory when
 * the cache covers it, else from the store; never anything not yet published. The synchronous
 * methods read memory only, so that a replay can be finished in the same tick as the socket joins
 * the chat's live events.
 */
export class MessageReads {
  constructor(private readonly source: ReadSource) {}

  private get cache(): MessageCache {
    return this.source.cache();
  }

  /** A message as clients see it, with the message it replies to (memory, else the store). */
  async view(m: StoredMessage): Promise<MessageView> {
    const { store, appId, chatId } = this.source;
    return messageView(m, m.replyToId ? (this.cache.get(m.replyToId) ?? (await store.messages.get(appId, chatId, m.replyToId))) : undefined);
  }

  /** Messages with seq > `afterSeq` that are published, from memory when the cache covers them. */
  async since(afterSeq: number, limit: number): Promise<{ messages: ChangedMessage[]; upTo: number; complete: boolean }> {
    const upTo = this.source.published().seq;
    const cached = this.cache.bySeq(afterSeq, upTo);
    const stored = cached.length > 0 && cached[0]!.seq === afterSeq + 1 ? cached : (await this.source.store.messages.afterSeq(this.source.appId, this.source.chatId, afterSeq, limit + 1)).filter((m) => m.seq <= upTo);
    const complete = stored.length <= limit;
    const slice = stored.slice(0, limit);
    const messages = await Promise.all(slice.map((m) => this.changed(this.cache.durableState(m.id) ?? m)));
    return { messages, upTo: complete ? upTo : (slice.at(-1)?.seq ?? afterSeq), complete };
  }

  /** Published messages with seq in (afterSeq, published], from memory only and synchronously; undefined when not all kept. */
  publishedSince(afterSeq: number): ChangedMessage[] | undefined {
    const upTo = this.source.published().seq;
    if (afterSeq >= upTo) return [];
    const found = this.cache.bySeq(afterSeq, upTo);
    if (found.length !== upTo - afterSeq) return undefined;
    return found.map((m) => this.changedNow(m));
  }

  /** Messages read earlier (asynchronously), brought to their current state from memory where a newer write has been published since. */
  current(items: ChangedMessage[]): ChangedMessage[] {
    return items.map((item) => {
      const m = this.cache.durableState(item.message.messageId);
      return m && (m.rev ?? 0) > item.rev ? this.changedNow(m, item.message.replyTo) : item;
    });
  }

  /** Messages written (created or changed) after revision `afterRev` and published, in their current state, in revision order. */
  async changesSince(afterRev: number, limit: number): Promise<{ changes: ChangedMessage[]; upToRev: number; complete: boolean }> {
    const upToRev = this.source.published().rev;
    const stored = this.cache.coversChangesAfter(afterRev)
      ? this.cache.byRev(afterRev, upToRev)
      : (await this.source.store.messages.changedSince(this.source.appId, this.source.chatId, afterRev, limit + 1)).filter((m) => (m.rev ?? 0) <= upToRev);
    const complete = stored.length <= limit;
    const slice = stored.slice(0, limit);
    const changes = await Promise.all(slice.map((m) => this.changed(this.cache.durableState(m.id) ?? m)));
    return { changes, upToRev: complete ? upToRev : (slice.at(-1)?.rev ?? afterRev), complete };
  }

  /** Like `changesSince`, from memory only and synchronously; undefined when the cache no longer covers it. */
  changesPublishedSince(afterRev: number): ChangedMessage[] | undefined {
    if (!this.cache.coversChangesAfter(afterRev)) return undefined;
    return this.cache.byRev(afterRev, this.source.published().rev).map((m) => this.changedNow(m));
  }

  /** The newest published message (a tombstone counts), if the cache has it. */
  lastMessage(): MessageView | undefined {
    const newest = this.cache.newest(this.source.published().seq);
    return newest && messageView(newest, newest.replyToId ? this.cache.durableState(newest.replyToId) : undefined);
  }

  private async changed(m: StoredMessage): Promise<ChangedMessage> {
    return { rev: m.rev ?? 0, seq: m.seq, message: await this.view(m) };
  }

  /** Synchronous: the replied-to message from memory, else as the caller last knew it. */
  private changedNow(m: StoredMessage, knownReplyTo?: MessageView['replyTo']): ChangedMessage {
    const replyTo = m.replyToId ? this.cache.durableState(m.replyToId) : undefined;
    const message = messageView(m, replyTo);
    if (!replyTo && m.replyToId && knownReplyTo) message.replyTo = knownReplyTo;
    return { rev: m.rev ?? 0, seq: m.seq, message };
  }
}
