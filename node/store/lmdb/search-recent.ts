import type { SearchPosting } from '../types.ts';
import type { NewPosting } from './search-blocks.ts';

/**
 * Postings indexed in memory and not yet written to LMDB (search.ts): per application and term,
 * oldest first. Their messages' pending records stay in LMDB until they are written, so a crash
 * loses nothing: the records are indexed again at the next open.
 */
export class RecentPostings {
  /** Per app and term: postings as added, and whether they are out of id order (sorted when read). */
  private readonly lists = new Map<string, { appId: string; term: string; postings: NewPosting[]; unsorted: boolean }>();
  /** Postings held (a message indexed twice counts twice until its list is next sorted). */
  size = 0;

  /**
   * Adds a term's postings (in id order); they may be older than some held (a late commit), or
   * the same (a message indexed twice: an edit, the backfill). Appending is all it does: a list
   * out of order is sorted, each posting once, when it is next read or written.
   */
  add(appId: string, term: string, postings: NewPosting[]): void {
    const key = `${appId}\u0000${term}`;
    let held = this.lists.get(key);
    if (!held) this.lists.set(key, (held = { appId, term, postings: [], unsorted: false }));
    const list = held.postings;
    for (const p of postings) {
      const last = list.at(-1);
      if (last && last.messageId >= p.messageId) {
        if (same(last, p)) continue;
        held.unsorted = true;
      }
      list.push(p);
      this.size++;
    }
  }

  /** Postings of `term` with ids strictly between `after` and `before` (either open), newest first, at most `limit`. */
  read(appId: string, term: string, before: string | undefined, after: string | undefined, limit: number): SearchPosting[] {
    const held = this.lists.get(`${appId}\u0000${term}`);
    if (!held) return [];
    const list = this.sorted(held);
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

  /** Every term held, with its postings in id order, each once. */
  *terms(): Iterable<{ appId: string; term: string; postings: NewPosting[] }> {
    for (const held of this.lists.values()) yield { appId: held.appId, term: held.term, postings: this.sorted(held) };
  }

  private sorted(held: { postings: NewPosting[]; unsorted: boolean }): NewPosting[] {
    if (!held.unsorted) return held.postings;
    const list = held.postings.sort((a, b) => (a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : a.logId < b.logId ? -1 : a.logId > b.logId ? 1 : 0));
    const out: NewPosting[] = [];
    for (const p of list) if (out.length === 0 || !same(out.at(-1)!, p)) out.push(p);
    this.size -= list.length - out.length;
    held.postings = out;
    held.unsorted = false;
    return out;
  }
}

const same = (a: NewPosting, b: NewPosting) => a.messageId === b.messageId && a.logId === b.logId;
