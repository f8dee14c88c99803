import type { PostingsCursor, SearchPosting } from './types.ts';

/** The order of SearchIndex.postings: newest first by id, the same message in two logs by log. */
export const newestFirst = (a: SearchPosting, b: SearchPosting): number =>
  a.messageId < b.messageId ? 1 : a.messageId > b.messageId ? -1 : a.logId < b.logId ? -1 : a.logId > b.logId ? 1 : 0;

/**
 * A cursor over `postings` (SearchIndex.cursor) that keeps nothing between pages: each page is
 * the newest `limit` before the last page's oldest. What the embedded store's reads need (a
 * page is a range of LMDB keys, found again at no cost).
 */
export function pagedCursor(postings: (range: { before?: string; after?: string }, limit: number) => Promise<SearchPosting[]>, range: { before?: string; after?: string }): PostingsCursor {
  let before = range.before;
  let done = false;
  return {
    async next(limit) {
      if (done || limit <= 0) return [];
      const page = await postings({ ...range, ...(before === undefined ? {} : { before }) }, limit);
      if (page.length < limit) done = true;
      if (page.length > 0) before = page.at(-1)!.messageId;
      return page;
    },
  };
}
