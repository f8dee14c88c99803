import type { SearchIndex, SearchPosting, StoredMessage } from '../types.ts';
import { termsOf } from '../search-terms.ts';
import { END, type Tables } from './shared.ts';

/** Dictionary keys remembered at most; past it they are forgotten (and written again). */
const KNOWN_TERMS = 100_000;

/** The last code point: past every string with a given prefix in UTF-8 byte order, as keys sort. */
const LAST = '\u{10ffff}';

/**
 * The search index on LMDB (see SearchIndex). Keys: ['q', app, term, messageId, logId] → true,
 * a term's postings in id (time) order, read backward; ['Q', app, term] → true, the application's
 * terms, for prefixes. Written in the transaction of the message's put (LmdbMessages.put).
 */
export class LmdbSearch implements SearchIndex {
  /** Dictionary keys (app and term) of committed transactions: not written again while remembered. */
  private readonly known = new Set<string>();

  constructor(private readonly t: Tables) {}

  /**
   * In the message put's transaction: the postings of a message whose text is new (see
   * `indexed`), and its terms in the dictionary unless known; the ones written are added to
   * `terms`, for `committed` once the transaction is.
   */
  write(m: StoredMessage, terms: Set<string>): void {
    for (const term of termsOf(m.content)) {
      this.t.db.put(['q', m.appId, term, m.id, m.chatId], true);
      const key = `${m.appId}\u0000${term}`;
      if (this.known.has(key) || terms.has(key)) continue;
      this.t.db.put(['Q', m.appId, term], true);
      terms.add(key);
    }
  }

  /** The dictionary keys a committed transaction wrote. */
  committed(terms: Set<string>): void {
    for (const key of terms) this.known.add(key);
    if (this.known.size > KNOWN_TERMS) this.known.clear();
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
