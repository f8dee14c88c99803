import type { SearchIndex, SearchPosting, StoredMessage } from '../types.ts';
import { termsOf } from '../search-terms.ts';
import { END, type Tables } from './shared.ts';

/** Dictionary keys remembered at most; past it they are forgotten (and written again). */
const KNOWN_TERMS = 100_000;

/** The last code point: past every string with a given prefix in UTF-8 byte order, as keys sort. */
const LAST = '\u{10ffff}';

/** How long after a message's put its text is indexed, at most (with every other message of that time). */
const INDEX_DELAY_MS = 100;
/** Messages indexed in one transaction, at most. */
const INDEX_BATCH = 2_000;

/** Reads a message as stored, in the current transaction (LmdbMessages.stored). */
export type StoredReader = (appId: string, logId: string, id: string) => StoredMessage | undefined;

/**
 * The search index on LMDB (see SearchIndex). Keys: ['q', app, term, messageId, logId] → true,
 * a term's postings in id (time) order, read backward; ['Q', app, term] → true, the application's
 * terms, for prefixes; ['p', messageId, app, logId] → true, a message whose text is to be indexed.
 *
 * The message's put writes its 'p' key, in its transaction (one key, appended: ids grow with
 * time), so an acknowledged message is durably on its way into the index. Within INDEX_DELAY_MS,
 * or at once when a search asks (`settled`), the pending messages are indexed together, a
 * transaction for up to INDEX_BATCH of them, from their text as stored then: a word used by many
 * messages costs one page for all of them, where a write per message cost a page per word each
 * (measured: the sends bench's CPU per send doubled). After a crash the 'p' keys left are indexed
 * at the next open's first `settled` or put.
 */
export class LmdbSearch implements SearchIndex {
  /** Dictionary keys (app and term) of committed transactions: not written again while remembered. */
  private readonly known = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The indexing under way (one at a time). */
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly t: Tables,
    private readonly stored: StoredReader,
  ) {}

  /** In the message put's transaction: `m`'s text is to be indexed (see `indexed`). */
  pending(m: StoredMessage): void {
    this.t.db.put(['p', m.id, m.appId, m.chatId], true);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.settled().catch(() => undefined);
    }, INDEX_DELAY_MS);
  }

  /** Resolves once every message whose put resolved before the call is indexed. */
  settled(): Promise<void> {
    const run = this.running.then(() => this.indexPending());
    this.running = run.catch(() => undefined);
    return run;
  }

  /** Stops the timer and indexes what is pending (what is left stays pending for the next open). */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.settled().catch(() => undefined);
  }

  private async indexPending(): Promise<void> {
    for (;;) {
      const keys = [...this.t.db.getKeys({ start: ['p'], end: ['p', END], limit: INDEX_BATCH })];
      if (keys.length === 0) return;
      const terms = new Set<string>();
      await this.t.root.transaction(() => {
        for (const key of keys) {
          const [, id, appId, logId] = key as [string, string, string, string];
          const m = this.stored(appId, logId, id);
          if (m && m.deletedAt === undefined) this.write(m, terms);
          this.t.db.remove(key);
        }
      });
      for (const key of terms) this.known.add(key);
      if (this.known.size > KNOWN_TERMS) this.known.clear();
      if (keys.length < INDEX_BATCH) return;
    }
  }

  /** In an indexing transaction: `m`'s postings, and its terms in the dictionary unless known (added to `terms`). */
  private write(m: StoredMessage, terms: Set<string>): void {
    for (const term of termsOf(m.content)) {
      this.t.db.put(['q', m.appId, term, m.id, m.chatId], true);
      const key = `${m.appId}\u0000${term}`;
      if (this.known.has(key) || terms.has(key)) continue;
      this.t.db.put(['Q', m.appId, term], true);
      terms.add(key);
    }
  }

  async postings(appId: string, term: string, range: { before?: string; after?: string }, limit: number): Promise<SearchPosting[]> {
    const out: SearchPosting[] = [];
    if (limit <= 0) return out;
    const keys = this.t.db.getKeys({
      // Reverse: from just below `before` (its keys sort after the bare id) down to just above `after`.
      start: ['q', appId, term, range.before ?? END],
      end: range.after === undefined ? ['q', appId, term] : ['q', appId, term, range.after, END],
      reverse: true,
    });
    for (const key of keys) {
      out.push({ messageId: key[3] as string, logId: key[4] as string });
      if (out.length >= limit) break;
    }
    return out;
  }

  async termsWithPrefix(appId: string, prefix: string, limit: number): Promise<string[]> {
    const out: string[] = [];
    if (limit <= 0) return out;
    for (const key of this.t.db.getKeys({ start: ['Q', appId, prefix], end: ['Q', appId, `${prefix}${LAST}`] })) {
      const term = key[2] as string;
      if (term.startsWith(prefix)) out.push(term);
      if (out.length >= limit) break;
    }
    return out;
  }
}
