/**
 * The message search index (README, "Search"). What every store interface promises: ../types.ts.
 */

/** A message a term was found in: the log it is in (its chat's, or a thread's: thread-log.ts) and its id. */
export interface SearchPosting {
  logId: string;
  messageId: string;
}

/** SearchIndex.cursor: pages of postings, newest first. */
export interface PostingsCursor {
  /** The next at most `limit` postings, each older than (or, in another log, as old as) those given before; fewer than `limit`: there are no more. */
  next(limit: number): Promise<SearchPosting[]>;
}

/**
 * For each application and term (search-terms.ts), the messages whose text had that term, newest
 * first by id (a UUIDv7: by time). The message store writes it from the write of the message
 * itself (a new message, or an edit that changes its text): Cassandra in that put, the embedded
 * store in a batch a moment later from a record written in that put, so an acknowledged message
 * is in it, or durably on its way, crash or not (`settled`). It is a superset: an edit adds the new text's terms and leaves
 * the old ones, a deletion or a hide removes nothing; a reader checks each message it finds
 * against the message as stored (chat/search.ts), which is what it shows anyway.
 */
export interface SearchIndex {
  /**
   * Messages of `term` (or of any of several: a prefix's terms), newest first, each once (per
   * log), with ids strictly between `after` and `before` (either open), at most `limit`:
   * O(limit) a term on both stores (plus, on Cassandra, one read per day of the range with none).
   */
  postings(appId: string, term: string | readonly string[], range: { before?: string; after?: string }, limit: number): Promise<SearchPosting[]>;
  /**
   * The postings of `terms` (a word, or a prefix's terms) in the range, as `postings` gives them,
   * a page at a time: what a search steps through. Each page is what `postings` would give with
   * `before` the last page's oldest; a cursor may keep what it learnt between pages (on Cassandra:
   * each term's hours, what it read past a page, which terms have no more).
   */
  cursor(appId: string, terms: readonly string[], range: { before?: string; after?: string }): PostingsCursor;
  /**
   * Resolves once every message whose put resolved before the call is in the index (the embedded
   * store indexes a moment after the put; Cassandra in the put itself): what a search waits for,
   * so it finds every message acknowledged before it began.
   */
  settled(): Promise<void>;
  /** Terms of the application starting with `prefix` (folded), in code-unit order, at most `limit`. */
  termsWithPrefix(appId: string, prefix: string, limit: number): Promise<string[]>;
}
