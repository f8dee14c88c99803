import type { SearchIndex, SearchPosting, StoredMessage } from '../types.ts';
import { termsOf } from '../search-terms.ts';
import { END, type Tables } from './shared.ts';

/** The last code point: past every string with a given prefix in UTF-8 byte order, as keys sort. */
const LAST = '\u{10ffff}';

/**
 * The search index on LMDB (see SearchIndex). Keys: ['q', app, term, messageId, logId] → true,
 * a term's postings in id (time) order, read backward; ['Q', app, term] → true, the application's
 * terms, for prefixes. Written in the transaction of the message's put (LmdbMessages.put).
 */
export class LmdbSearch implements SearchIndex {
  constructor(private readonly t: Tables) {}

  /** In the message put's transaction: the postings of a message whose text is new (see `indexed`). */
  write(m: StoredMessage): void {
    for (const term of termsOf(m.content)) {
      this.t.db.put(['q', m.appId, term, m.id, m.chatId], true);
      this.t.db.put(['Q', m.appId, term], true);
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
