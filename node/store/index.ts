export type * from './types.ts';
export { BUCKET_MS, FencedError, MENTION_WINDOW } from './types.ts';
export { LmdbNodeStore } from './lmdb/index.ts';
export { CassandraNodeStore, HOLD, nodeMigrations, type HoldTiming } from './cassandra/index.ts';
export { changeLanded } from './change-check.ts';
export { MAX_ENCODED_SEQ, newMessageId, seqOfMessageId } from './message-id.ts';
export { chatOfLog, storedReply, threadLogId } from './thread-log.ts';
export { leastIdAt, uuidv7Time } from './buckets.ts';
export { fold, SEARCH_TERM_CHARS, termsOf, tokens, type Token } from './search-terms.ts';
