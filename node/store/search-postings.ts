import type { SearchPosting } from './types.ts';

/** The order of SearchIndex.postings: newest first by id, the same message in two logs by log. */
export const newestFirst = (a: SearchPosting, b: SearchPosting): number =>
  a.messageId < b.messageId ? 1 : a.messageId > b.messageId ? -1 : a.logId < b.logId ? -1 : a.logId > b.logId ? 1 : 0;
