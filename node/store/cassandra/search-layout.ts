import { uuidv7Time } from '../buckets.ts';
import { SEARCH_HOUR_MS } from '../search-terms.ts';

/**
 * The keys of the search index's rows on Cassandra (search.ts writes them, search-cursor.ts reads
 * them). The rows a message's words write land in partitions shared by many words: what costs
 * Cassandra is a mutation, one per partition of a request, more than a row
 * (bench/micro/cassandra-writes.ts `--spread --shared`), and a word seen for the first time (an id,
 * a number, a link) is as common in chat as any other.
 */

/** Partitions an application's postings of one hour are spread over (by their word): see shardOf. */
export const SEARCH_SHARDS = 16;

/**
 * The partition of an hour's postings a term's are in: FNV-1a of its UTF-16 code units, modulo
 * SEARCH_SHARDS. Stored in every posting's key, so it never changes (a change would hide every
 * posting written before it).
 */
export function shardOf(term: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < term.length; i++) h = Math.imul(h ^ term.charCodeAt(i), 0x01000193);
  return (h >>> 0) % SEARCH_SHARDS;
}

/** The hour of a message id's time: its postings' partition. */
export const hourOf = (id: string) => Math.floor(uuidv7Time(id) / SEARCH_HOUR_MS);

/** The day (UTC) an hour is in: its (word, hour) rows' partition. */
export const dayOf = (hour: number) => Math.floor(hour / 24);

/** A term's first character: the partition of the term dictionary it is in. */
export const leadOf = (term: string) => String.fromCodePoint(term.codePointAt(0)!);
