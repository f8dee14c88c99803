/** Partitions an application's postings of one hour are spread over (by their term): see shardOf. */
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
