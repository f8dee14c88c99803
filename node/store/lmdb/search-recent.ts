import type { SearchPosting } from '../types.ts';
import type { NewPosting } from './search-blocks.ts';

/**
 * Postings indexed in memory and not yet written to LMDB (search.ts): per application and term,
 * oldest first. Their messages' pending records stay in LMDB until they are written, so a crash
 * loses nothing: the records are indexed again at the next open.
 */
export class RecentPostings {
  private readonly lists = new Map<string, { appId: string; term: string; postings: NewPosting[] }>();
  /** Postings held. */
  size = 0;

  /**
   * Adds a term's postings (in id order); they may be older than some held (a late commit), or
   * the same (a message indexed twice: an edit, the backfill): each is held once.
   */
  add(appId: string, term: string, postings: NewPosting[]): void {
    const key = `${appId}\u0000${term}`;
    const held = this.lists.get(key);
    const before = held?.postings.length ?? 0;
    if (!held) this.lists.set(key, { appId, term, postings: merge([], postings) });
    else if (held.postings.at(-1)!.messageId < postings[0]!.messageId) {
      for (const p of postings) if (!same(held.postings.at(-1)!, p)) held.postings.push(p);
    }
    else held.postings = merge(held.postings, postings);
    this.size += this.lists.get(key)!.postings.length - before;
  }

  /** Postings of `term` with ids strictly between `after` and `before` (either open), newest first, at most `limit`. */
  read(appId: string, term: string, before: string | undefined, after: string | undefined, limit: number): SearchPosting[] {
    const list = this.lists.get(`${appId}\u0000${term}`)?.postings;
    if (!list) return [];
    // The first index whose id is at or past `before`: everything below it is older.
    let [lo, hi] = [0, list.length];
    if (before !== undefined) {
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (list[mid]!.messageId < before) lo = mid + 1;
        else hi = mid;
      }
    } else lo = list.length;
    const out: SearchPosting[] = [];
    for (let i = lo - 1; i >= 0 && out.length < limit; i--) {
      const p = list[i]!;
      if (after !== undefined && p.messageId <= after) break;
      out.push({ messageId: p.messageId, logId: p.logId });
    }
    return out;
  }

  /** Every term held, with its postings oldest first. */
  terms(): Iterable<{ appId: string; term: string; postings: NewPosting[] }> {
    return this.lists.values();
  }
}

/** The postings of two lists in id order, each (message and log) once. */
function merge(a: NewPosting[], b: NewPosting[]): NewPosting[] {
  const out: NewPosting[] = [];
  let [i, j] = [0, 0];
  while (i < a.length || j < b.length) {
    const p = j >= b.length || (i < a.length && a[i]!.messageId <= b[j]!.messageId) ? a[i++]! : b[j++]!;
    const last = out.at(-1);
    if (!last || !same(last, p)) out.push(p);
  }
  return out;
}

const same = (a: NewPosting, b: NewPosting) => a.messageId === b.messageId && a.logId === b.logId;
