import { RecentSet } from '../../../common/cache/index.ts';
import { str, type BatchStatement, type Cql } from '../../../common/cassandra/index.ts';
import type { PostingsCursor, SearchIndex, SearchPosting, StoredMessage } from '../types.ts';
import { termsOf } from '../search-terms.ts';
import { TermsCursor } from './search-cursor.ts';
import { dayOf, hourOf, leadOf, shardOf } from './search-layout.ts';

export { SEARCH_SHARDS, shardOf } from './search-layout.ts';

/** The last code point: past every string with a given prefix in UTF-8 byte order, as Cassandra sorts text. */
const LAST = '\u{10ffff}';

/** (term, hour) and (term, day) rows remembered as written, at most: past it the least recently written are forgotten (and written again). */
const KNOWN_ROWS = 50_000;

/**
 * The statements that index messages' text (migrations node-021-search, node-023-search-shards,
 * node-026-search-days), for the message puts that write them (MessageWrites): per term, its
 * posting, and its hour and its day in the dictionary unless a put of this store that succeeded
 * wrote them already (a word used all day costs one row a message, not three). No row has a
 * partition of its own word: a posting's partition is its application's hour and the term's
 * shard, a (term, hour) row's the application's day, a dictionary row's the application and the
 * term's first character. What costs Cassandra is the mutation, one per partition of a request,
 * more than the row (bench/micro/cassandra-writes.ts `--spread --shared`: 96 rows a request in 96
 * partitions cost it 132–332 µs of CPU a row at a p50 of 184–599 ms, in 16 partitions 36–89 µs at
 * 23 ms), so the rows of all the words of the messages sent together fall in at most
 * SEARCH_SHARDS + 1 partitions and one per first character, however many of the words are new.
 * (Before node-026 a word's hours were a partition of their own. In the cluster bench, whose every
 * message has a word never seen, that made a fixed 1,142 msgs/s run's delivery p50 126–157 ms; the
 * hours spread over 16 shards of a month instead, 59–76 ms; in one partition a day, 17–28 ms.)
 * Rows are remembered only once their put succeeded (`landed`): a put that failed, or whose
 * outcome is unknown, is written again whole or its rows are written by the next message that
 * needs them.
 */
export class SearchRows {
  private readonly known = new RecentSet<string>(KNOWN_ROWS);
  private readonly insert: { posting: string; hour: string };

  constructor(
    private readonly ks: string,
    /** false: messages' text is not indexed (SEARCH_INDEX=off). */
    private readonly enabled: boolean,
  ) {
    this.insert = {
      posting: `INSERT INTO ${ks}.search_hour_postings (app_id, hour, shard, term, id, log_id) VALUES (?, ?, ?, ?, ?, ?)`,
      hour: `INSERT INTO ${ks}.search_day_hours (app_id, day, term, hour) VALUES (?, ?, ?, ?)`,
    };
  }

  /**
   * The statements of `m`'s terms, adding to `keys` (the put's own, to pass to `landed` once it is
   * written) the rows it writes besides postings: a put writes each once.
   */
  of(m: StoredMessage, keys: Set<string>): BatchStatement[] {
    const statements: BatchStatement[] = [];
    if (!this.enabled) return statements;
    const hour = hourOf(m.id);
    const day = dayOf(hour);
    for (const term of termsOf(m.content)) {
      // The partition key's values first: the merger orders a request's rows by them (put-merger.ts).
      statements.push({ query: this.insert.posting, params: [m.appId, hour, shardOf(term), term, m.id, m.chatId] });
      const hourKey = `h\u0000${m.appId}\u0000${term}\u0000${hour}`;
      if (!this.known.has(hourKey) && !keys.has(hourKey)) {
        statements.push({ query: this.insert.hour, params: [m.appId, day, term, hour] });
        keys.add(hourKey);
      }
      const dayKey = `d\u0000${m.appId}\u0000${term}\u0000${day}`;
      if (!this.known.has(dayKey) && !keys.has(dayKey)) {
        // The day in the text, so the values are the partition key's, which the merger sorts by (an
        // integer: a prepared statement a day; a backfill of a long history prepares one per day again
        // as the driver's cache of 500 forgets them).
        statements.push({ query: `UPDATE ${this.ks}.search_terms SET days = days + {${day}} WHERE app_id = ? AND lead = ? AND term = ?`, params: [m.appId, leadOf(term), term] });
        keys.add(dayKey);
      }
    }
    return statements;
  }

  /** The rows of a put that succeeded: not written again while remembered. */
  landed(keys: Iterable<string>): void {
    for (const key of keys) this.known.add(key);
  }
}

/** The search index on Cassandra (see SearchIndex): a term's hours newest first, then its postings in each hour. */
export class CassandraSearch implements SearchIndex {
  constructor(
    private readonly db: Cql,
    private readonly ks: string,
  ) {}

  postings(appId: string, term: string | readonly string[], range: { before?: string; after?: string }, limit: number): Promise<SearchPosting[]> {
    return this.cursor(appId, typeof term === 'string' ? [term] : term, range).next(limit);
  }

  cursor(appId: string, terms: readonly string[], range: { before?: string; after?: string }): PostingsCursor {
    return new TermsCursor(this.db, this.ks, appId, terms, range);
  }

  /** Written in the message's own put: nothing is pending. */
  async settled(): Promise<void> {}

  async termsWithPrefix(appId: string, prefix: string, limit: number): Promise<string[]> {
    if (limit <= 0 || prefix === '') return [];
    const rows = await this.db.execute(`SELECT term FROM ${this.ks}.search_terms WHERE app_id = ? AND lead = ? AND term >= ? AND term < ? LIMIT ?`, [appId, leadOf(prefix), prefix, `${prefix}${LAST}`, limit]);
    return rows.rows.map((r) => str(r, 'term')).filter((t) => t.startsWith(prefix));
  }
}
