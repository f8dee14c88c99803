import { num, str, type Cql } from '../../../common/cassandra/index.ts';
import { newestFirst } from '../search-postings.ts';
import type { PostingsCursor, SearchPosting } from '../types.ts';
import { dayOf, hourOf, leadOf, shardOf } from './search-layout.ts';

/** Postings of each term a cursor over several reads at least in its first round. */
const UNION_FIRST = 20;

type Range = { before?: string; after?: string };

/**
 * One term's postings in a range, read on demand, newest first: the days it has (its dictionary
 * row, read once), the hours it has in each, newest first (one read a day), and each hour's
 * partition of postings paged from where the last read ended.
 */
class TermReader {
  private hours: number[] = [];
  /** The term's days still to read, newest first (undefined until its dictionary row is read). */
  private days: number[] | undefined;
  /** The newest hour and the oldest of the range. */
  private readonly high: number;
  private readonly low: number;
  private before: string | undefined;
  /** true once every posting of the term in the range was read. */
  done = false;

  constructor(
    private readonly db: Cql,
    private readonly ks: string,
    private readonly appId: string,
    readonly term: string,
    private readonly range: Range,
  ) {
    this.before = range.before;
    this.high = range.before === undefined ? Number.MAX_SAFE_INTEGER : hourOf(range.before);
    this.low = range.after === undefined ? 0 : hourOf(range.after);
  }

  /** Up to `n` postings older than those read before; fewer: the term has no more (`done`). */
  async read(n: number): Promise<SearchPosting[]> {
    const out: SearchPosting[] = [];
    while (out.length < n && !this.done) {
      if (this.hours.length === 0) {
        await this.readHours();
        if (this.hours.length === 0) this.done = true;
        continue;
      }
      const asked = n - out.length;
      const ids = [this.before === undefined ? '' : ' AND id < ?', this.range.after === undefined ? '' : ' AND id > ?'].join('');
      const rows = await this.db.execute(`SELECT id, log_id FROM ${this.ks}.search_hour_postings WHERE app_id = ? AND hour = ? AND shard = ? AND term = ?${ids} LIMIT ?`, [
        this.appId,
        this.hours[0],
        shardOf(this.term),
        this.term,
        ...(this.before === undefined ? [] : [this.before]),
        ...(this.range.after === undefined ? [] : [this.range.after]),
        asked,
      ]);
      for (const r of rows.rows) out.push({ messageId: str(r, 'id'), logId: str(r, 'log_id') });
      if (rows.rows.length > 0) this.before = out.at(-1)!.messageId;
      // An hour read short has no more: the next is older, so `before` bounds nothing there.
      if (rows.rows.length < asked) this.hours.shift();
    }
    return out;
  }

  /** The next hours of the term in the range, newest first, a day at a time; none once every day was read. */
  private async readHours(): Promise<void> {
    if (this.days === undefined) {
      const row = (await this.db.execute(`SELECT days FROM ${this.ks}.search_terms WHERE app_id = ? AND lead = ? AND term = ?`, [this.appId, leadOf(this.term), this.term])).first();
      const days = (row?.get('days') as number[] | null | undefined) ?? [];
      this.days = days.filter((d) => d >= dayOf(this.low) && d <= dayOf(this.high)).sort((a, b) => b - a);
    }
    while (this.hours.length === 0 && this.days.length > 0) {
      const day = this.days.shift()!;
      const rows = await this.db.execute(`SELECT hour FROM ${this.ks}.search_day_hours WHERE app_id = ? AND day = ? AND term = ? AND hour <= ? AND hour >= ?`, [this.appId, day, this.term, this.high, this.low]);
      this.hours = rows.rows.map((r) => num(r, 'hour'));
    }
  }
}

/**
 * The postings of any of several terms (one, a word; or a prefix's), newest first, each once, a
 * page at a time (SearchIndex.cursor). A page is read in rounds: at first each term's share of
 * it (twice an even share, at least UNION_FIRST; one term: the page), then more of only the terms
 * that bound what is known, for twice what is missing. Known: every posting as new as the
 * newest of the oldest reads of the terms that may hold more, or newer. What a term read beyond a page is
 * kept for the next, and a term read whole is not read again: a prefix's terms, mostly rare beside
 * one or two common ones, cost about the page's rows and one read each, not a page each (a search
 * costs Cassandra, and the node, about the rows it reads).
 */
export class TermsCursor implements PostingsCursor {
  private readonly readers: TermReader[];
  /** Per term, postings read and not given yet, newest first. */
  private readonly held = new Map<TermReader, SearchPosting[]>();
  /** Per term, the oldest id read. */
  private readonly oldest = new Map<TermReader, string>();
  private started = false;

  constructor(db: Cql, ks: string, appId: string, terms: readonly string[], range: Range) {
    this.readers = [...new Set(terms)].map((t) => new TermReader(db, ks, appId, t, range));
    for (const r of this.readers) this.held.set(r, []);
  }

  async next(limit: number): Promise<SearchPosting[]> {
    if (limit <= 0 || this.readers.length === 0) return [];
    const over = this.readers.length === 1 ? 1 : 2;
    let round: [TermReader, number][] = this.started ? [] : this.readers.map((r) => [r, Math.max(this.readers.length === 1 ? 1 : UNION_FIRST, Math.ceil((over * limit) / this.readers.length))]);
    this.started = true;
    for (;;) {
      await Promise.all(
        round.map(async ([reader, n]) => {
          const more = await reader.read(n);
          if (more.length > 0) this.oldest.set(reader, more.at(-1)!.messageId);
          this.held.set(reader, this.held.get(reader)!.concat(more));
        }),
      );
      // A term that may hold more has read at least one posting (a read short of `n` is the last).
      const open = this.readers.filter((r) => !r.done);
      const horizon = open.reduce<string | undefined>((h, r) => (h === undefined || this.oldest.get(r)! > h ? this.oldest.get(r)! : h), undefined);
      const known = this.known(horizon);
      if (known.length >= limit || open.length === 0) return this.give(known.slice(0, limit));
      const n = Math.max(this.readers.length === 1 ? 1 : UNION_FIRST, over * (limit - known.length));
      round = open.filter((r) => this.oldest.get(r) === horizon).map((r) => [r, n]);
    }
  }

  /** The held postings not older than `horizon` (all, when undefined), newest first, each once. */
  private known(horizon: string | undefined): SearchPosting[] {
    const out: SearchPosting[] = [];
    for (const list of this.held.values()) {
      // Each term's are newest first: a prefix of its list.
      for (const p of list) {
        if (horizon !== undefined && p.messageId < horizon) break;
        out.push(p);
      }
    }
    out.sort(newestFirst);
    // The same message under two terms: side by side once sorted.
    return out.filter((p, i) => i === 0 || newestFirst(out[i - 1]!, p) !== 0);
  }

  /** Gives `page` (the newest known): every held posting up to its last, in order, is given (or a repeat of one). */
  private give(page: SearchPosting[]): SearchPosting[] {
    const last = page.at(-1);
    if (last === undefined) return page;
    for (const [reader, list] of this.held) {
      let from = 0;
      while (from < list.length && newestFirst(list[from]!, last) <= 0) from++;
      if (from > 0) this.held.set(reader, list.slice(from));
    }
    return page;
  }
}
