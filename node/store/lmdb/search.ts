import type { SearchIndex, SearchPosting, StoredMessage } from '../types.ts';
import { termsOf } from '../search-terms.ts';
import { leastIdAt, uuidv7Time } from '../buckets.ts';
import { END, type Db, type Key, type Tables } from './shared.ts';
import { LmdbSearchBackfill, type BackfillProgress } from './search-backfill.ts';
import { decodeBlock, encodeBlock, oldestOf, uuidBytes, type NewPosting } from './search-blocks.ts';
import { RecentPostings } from './search-recent.ts';

/** Dictionary keys remembered at most; past it they are forgotten (and written again). */
const KNOWN_TERMS = 100_000;

/** The last code point: past every string with a given prefix in UTF-8 byte order, as keys sort. */
const LAST = '\u{10ffff}';

/** How long after a message's put its text is indexed, at most (with every other message of that time). */
const INDEX_DELAY_MS = 200;
/** How long the text of a pending record is kept in memory at most (an aborted put's is never indexed). */
const TEXTS_KEPT_MS = 60_000;
/** Messages indexed in one step, at least when that many are pending. */
const INDEX_BATCH = 2_000;
/** Postings held in memory before they are written to LMDB (or WRITE_DELAY_MS after the first). */
const FLUSH_POSTINGS = 200_000;
const WRITE_DELAY_MS = 10_000;
/** Keys written in one transaction of a write. */
const WRITE_PUTS = 1_000;
/** The most time between the oldest and the newest message of a block (see LmdbSearch). */
export const BLOCK_SPAN_MS = 2_000;

/** Reads a message as stored, in the current transaction (LmdbMessages.stored). */
export type StoredReader = (appId: string, logId: string, id: string) => StoredMessage | undefined;

/**
 * The search index on LMDB (see SearchIndex). Keys:
 * - ['q', app, term, newestId, blockId] → a block of the term's postings (search-blocks.ts, its oldest id first),
 *   the messages of one indexing batch that have the term, at most BLOCK_SPAN_MS apart;
 * - ['Q', app, term] → true: the application's terms, for prefixes;
 * - ['p', firstId, recordId] → [messageId, app, logId, …]: messages of a put whose text is to be indexed;
 * - ['meta', 'backfill']: how far the backfill of older messages got (search-backfill.ts).
 *
 * A put of messages writes one 'p' record for them, in its transaction (appended: ids grow with
 * time), so an acknowledged message is durably on its way into the index; the indexer takes their
 * text from memory (as put), or reads it as stored after a restart. Within INDEX_DELAY_MS, or at
 * once when a search asks (`settled`), the pending messages are indexed in memory
 * (search-recent.ts), which readers merge with LMDB's blocks; every FLUSH_POSTINGS postings, or
 * WRITE_DELAY_MS after the first, they are written to LMDB, one block per term, in transactions of
 * WRITE_PUTS keys, and their records removed with the last. A word of every message then costs one
 * write for thousands of messages: a key per word and message doubled the sends bench's CPU per
 * send, and a write every 200 ms (each dirtying a page per word) raised the acknowledgements' p99
 * at 6,000 sends/s from 14 to 110 ms, its commits holding LMDB's one writer. After a crash the 'p'
 * records left are indexed at the next open's first `settled` or put.
 *
 * Blocks of a term may overlap in time (a message indexed after a newer one: a late commit, an
 * edit), so a reader takes them newest-first by their newest id and stops at the first whose
 * newest id is below every posting it still needs; it skips the blocks all of whose ids are out
 * of range by their first bytes, and starts BLOCK_SPAN_MS past `before`, where the newest block that can
 * hold an older id ends.
 */
export class LmdbSearch implements SearchIndex {
  /** Dictionary keys (app and term) of committed transactions: not written again while remembered. */
  private readonly known = new Set<string>();
  /** Makes block ids unique across the node's runs (with `blocks`). */
  private readonly run = `${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}`;
  private blocks = 0;
  /** Block ids grow across the node's runs: a block never replaces another with the same newest id (an edit's). */
  private readonly blockBase = Date.now() * 1000;
  private records = 0;
  /** Indexed, not yet written to LMDB (search-recent.ts); `writing`: being written. */
  private recent = new RecentPostings();
  private writing: RecentPostings | undefined;
  /** Terms of `recent` (and `writing`) not known to be in the dictionary, as app NUL term. */
  private newTerms = new Set<string>();
  private writingTerms = new Set<string>();
  /** Pending records whose messages are in `recent`: removed with its write. */
  private unwritten: Key[] = [];
  /** Their record ids, skipped by the indexer until removed. */
  private readonly indexed = new Set<string>();
  /** The write under way (one at a time), and the timer of the next. */
  private writes: Promise<void> = Promise.resolve();
  private writeTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly writePostings: number;
  /** The texts of pending records put by this run, by record id. */
  private readonly texts = new Map<string, { at: number; contents: string[] }>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** The indexing under way (one at a time). */
  private running: Promise<void> = Promise.resolve();

  /** Indexes the messages stored before the index (none when it is off). */
  private readonly backfiller: LmdbSearchBackfill | undefined;

  constructor(
    private readonly t: Tables,
    private readonly stored: StoredReader,
    /** false: messages' text is not indexed (SEARCH_INDEX=off). */
    private readonly enabled: boolean,
    /** The messages table, which the backfill walks. */
    messages?: Db,
    /** Messages per backfill transaction; postings held in memory before a write (FLUSH_POSTINGS): smaller in tests. */
    tuning: { backfillChunk?: number; writePostings?: number } = {},
  ) {
    this.writePostings = tuning.writePostings ?? FLUSH_POSTINGS;
    if (enabled && messages) this.backfiller = new LmdbSearchBackfill(t, messages, (entries) => void this.record(entries), () => this.settled(), tuning.backfillChunk);
  }

  /**
   * Begins (or goes on with) the backfill of the messages stored before the index, unless it is
   * complete: in the background, a transaction per chunk; the store calls it once it is open.
   */
  startBackfill(): void {
    void this.backfiller?.start();
  }

  /**
   * Resolves once the backfill has ended, with its progress (`complete`, or `stopped` by a close
   * before the end); rejects if a chunk failed (it goes on at the next open). Every message it
   * recorded is indexed by then.
   */
  get backfill(): Promise<BackfillProgress> {
    return this.backfiller?.current ?? Promise.resolve(this.backfillProgress());
  }

  backfillProgress(): BackfillProgress {
    return this.backfiller?.status() ?? { state: 'off', messages: 0, scanned: 0, scannedNow: 0, resumedAt: 0 };
  }

  /**
   * Runs the backfill again from the first message, e.g. for messages put while the index was off
   * (SEARCH_INDEX=off wrote none): resolves as `backfill` does. Messages indexed already get
   * duplicate postings, which readers drop.
   */
  reindex(): Promise<BackfillProgress> {
    if (!this.backfiller) return Promise.reject(new Error('the search index is off'));
    return this.backfiller.restart();
  }

  /** In a message put's transaction: the text of `messages` is to be indexed (one record for all of them). */
  pending(messages: readonly StoredMessage[]): void {
    if (!this.enabled || messages.length === 0) return;
    const record = this.record(messages.flatMap((m) => [m.id, m.appId, m.chatId]));
    // The text as put, for the indexer: no read back while it is remembered (an aborted put's stays
    // until the next indexing clears what is older than TEXTS_KEPT_MS).
    this.texts.set(record, { at: Date.now(), contents: messages.map((m) => m.content) });
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.settled().catch(() => undefined);
    }, INDEX_DELAY_MS);
  }

  /** Resolves once every message whose put resolved before the call is indexed. */
  settled(): Promise<void> {
    const run = this.running.then(() => this.indexPending());
    this.running = run.catch(() => undefined);
    return run;
  }

  /**
   * In a write transaction: one pending record of messages, as [messageId, app, logId] triples, for
   * the next indexing (their text is read as stored unless `pending` keeps it).
   */
  private record(entries: string[]): string {
    const record = `${this.run}.${this.records++}`;
    this.t.db.put(['p', entries[0]!, record], entries);
    return record;
  }

  /**
   * Stops the backfill after its chunk under way and the timer, and indexes what is pending (what
   * is left stays pending, and the backfill goes on, at the next open).
   */
  async close(): Promise<void> {
    await this.backfiller?.stop();
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.settled().catch(() => undefined);
    await this.write().catch(() => undefined);
    clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
  }

  private async indexPending(): Promise<void> {
    for (;;) {
      const records: { key: Key; ids: string[]; texts?: string[] }[] = [];
      let count = 0;
      for (const { key, value } of this.t.db.getRange({ start: ['p'], end: ['p', END] })) {
        const id = key[2] as string;
        if (this.indexed.has(id)) continue;
        const ids = value as string[];
        records.push({ key, ids, ...(this.texts.has(id) ? { texts: this.texts.get(id)!.contents } : {}) });
        count += ids.length / 3;
        if (count >= INDEX_BATCH) break;
      }
      // This background read began a read snapshot that every read of this turn would share
      // (lmdb-js renews it a macrotask later): let the next read take a fresh one instead, so a
      // commit of another instance on the same path that lands meanwhile is seen.
      this.t.root.resetReadTxn();
      if (records.length === 0) break;
      this.addToRecent(records);
      for (const { key } of records) {
        this.texts.delete(key[2] as string);
        this.indexed.add(key[2] as string);
        this.unwritten.push(key);
      }
      if (this.recent.size >= this.writePostings) {
        // A failed write leaves its postings to the next (they stay in memory, their records in LMDB).
        const writing = this.write().catch(() => undefined);
        // Memory stays bounded: past twice the threshold, indexing waits for the write.
        if (this.recent.size >= 2 * this.writePostings) await writing;
      }
      if (count < INDEX_BATCH) break;
    }
    if (this.recent.size > 0) this.writeTimer ??= setTimeout(() => void this.write().catch(() => undefined), WRITE_DELAY_MS);
    const old = Date.now() - TEXTS_KEPT_MS;
    for (const [record, { at }] of this.texts) if (at < old) this.texts.delete(record);
  }

  /** The messages of `records`, their words' postings added to `recent`. */
  private addToRecent(records: { ids: string[]; texts?: string[] }[]): void {
    // Each log's bytes once a batch.
    const logs = new Map<string, Buffer>();
    const batch: { posting: NewPosting; appId: string; content: string }[] = [];
    for (const { ids, texts } of records) {
      for (let i = 0; i < ids.length; i += 3) {
        const [messageId, appId, logId] = [ids[i]!, ids[i + 1]!, ids[i + 2]!];
        const content = texts ? texts[i / 3] : this.stored(appId, logId, messageId)?.content;
        if (!content) continue;
        let logBytes = logs.get(logId);
        if (!logBytes) logs.set(logId, (logBytes = Buffer.from(logId, 'utf8')));
        batch.push({ posting: { messageId, logId, idBytes: uuidBytes(messageId), logBytes, time: uuidv7Time(messageId) }, appId, content });
      }
    }
    // In id order, so each term's postings come out oldest first.
    batch.sort((a, b) => (a.posting.messageId < b.posting.messageId ? -1 : 1));
    const byTerm = new Map<string, { appId: string; term: string; postings: NewPosting[] }>();
    for (const { posting, appId, content } of batch) {
      for (const term of termsOf(content)) {
        const key = `${appId}\u0000${term}`;
        const list = byTerm.get(key);
        if (list) list.postings.push(posting);
        else byTerm.set(key, { appId, term, postings: [posting] });
      }
    }
    for (const [key, { appId, term, postings }] of byTerm) {
      this.recent.add(appId, term, postings);
      if (!this.known.has(key)) this.newTerms.add(key);
    }
  }

  /**
   * Writes what `recent` holds to LMDB as blocks, with the new terms' dictionary entries, and
   * removes the pending records it came from in the last transaction: once written, a crash
   * loses nothing either way (records written before are indexed again, harmlessly). One write at
   * a time; readers see `writing` (and `recent`) meanwhile. Transactions of at most WRITE_PUTS
   * keys, so LMDB's one writer is free for messages' commits between them.
   */
  private write(): Promise<void> {
    clearTimeout(this.writeTimer);
    this.writeTimer = undefined;
    const run = this.writes.then(async () => {
      if (this.recent.size === 0 && this.unwritten.length === 0) return;
      const [postings, terms, records] = [this.recent, this.newTerms, this.unwritten];
      this.writing = postings;
      this.writingTerms = terms;
      this.recent = new RecentPostings();
      this.newTerms = new Set();
      this.unwritten = [];
      try {
        const puts: [Key, unknown][] = [];
        for (const { appId, term, postings: list } of postings.terms()) this.blocksOf(appId, term, list, puts);
        for (const key of terms) {
          const [appId, term] = key.split('\u0000') as [string, string];
          puts.push([['Q', appId, term], true]);
        }
        for (let i = 0; i < puts.length || i === 0; i += WRITE_PUTS) {
          const last = i + WRITE_PUTS >= puts.length;
          await this.t.root.transaction(() => {
            for (const [key, value] of puts.slice(i, i + WRITE_PUTS)) this.t.db.put(key, value);
            if (last) for (const key of records) this.t.db.remove(key);
          });
        }
        for (const key of records) this.indexed.delete(key[2] as string);
        for (const key of terms) this.known.add(key);
        if (this.known.size > KNOWN_TERMS) this.known.clear();
      } catch (error) {
        // Not written (blocks a transaction did write are read as duplicates): all of it goes
        // back, to be written again by the next write.
        for (const { appId, term, postings: list } of postings.terms()) this.recent.add(appId, term, list);
        for (const key of terms) this.newTerms.add(key);
        this.unwritten.push(...records);
        throw error;
      } finally {
        this.writing = undefined;
        this.writingTerms = new Set();
      }
    });
    this.writes = run.catch(() => undefined);
    return run;
  }

  /** A term's postings (oldest first) in blocks of at most BLOCK_SPAN_MS, as puts. */
  private blocksOf(appId: string, term: string, postings: NewPosting[], puts: [Key, unknown][]): void {
    let from = 0;
    for (let i = 1; i <= postings.length; i++) {
      if (i < postings.length && postings[i]!.time - postings[from]!.time <= BLOCK_SPAN_MS) continue;
      const block = postings.slice(from, i).reverse();
      puts.push([['q', appId, term, block[0]!.messageId, (this.blockBase + this.blocks++).toString(36)], encodeBlock(block)]);
      from = i;
    }
  }

  async postings(appId: string, term: string, range: { before?: string; after?: string }, limit: number): Promise<SearchPosting[]> {
    if (limit <= 0) return [];
    const { before, after } = range;
    const keys = this.t.db.getKeys({
      // Newest block first, from the last that can hold an id below `before` down to those past `after`.
      start: ['q', appId, term, before === undefined ? END : leastIdAt(uuidv7Time(before) + BLOCK_SPAN_MS + 1)],
      end: after === undefined ? ['q', appId, term] : ['q', appId, term, after, END],
      reverse: true,
    });
    const found = new Map<string, SearchPosting>();
    // What is indexed and not yet (or being) written: in memory.
    for (const held of [this.recent, this.writing]) for (const p of held?.read(appId, term, before, after, limit) ?? []) found.set(`${p.messageId}/${p.logId}`, p);
    let sorted = [...found.values()].sort(newestFirst);
    for (const key of keys) {
      const newest = key[3] as string;
      // Enough, and every id of this block and the ones after it is older than the limit-th.
      if (sorted.length >= limit && newest < sorted[limit - 1]!.messageId) break;
      const block = this.t.db.get(key) as Buffer;
      if (before !== undefined && oldestOf(block) >= before) continue;
      for (const p of decodeBlock(block)) {
        if ((before !== undefined && p.messageId >= before) || (after !== undefined && p.messageId <= after)) continue;
        found.set(`${p.messageId}/${p.logId}`, p);
      }
      sorted = [...found.values()].sort(newestFirst);
    }
    return sorted.slice(0, limit);
  }

  async termsWithPrefix(appId: string, prefix: string, limit: number): Promise<string[]> {
    const out = new Set<string>();
    if (limit <= 0) return [];
    for (const key of this.t.db.getKeys({ start: ['Q', appId, prefix], end: ['Q', appId, `${prefix}${LAST}`] })) {
      const term = key[2] as string;
      if (term.startsWith(prefix)) out.add(term);
      if (out.size >= limit) break;
    }
    // Terms not written yet (few: only those new to the dictionary).
    const start = `${appId}\u0000${prefix}`;
    for (const terms of [this.newTerms, this.writingTerms]) for (const key of terms) if (key.startsWith(start)) out.add(key.slice(appId.length + 1));
    return [...out].sort(byCodeUnits).slice(0, limit);
  }
}

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const newestFirst = (a: SearchPosting, b: SearchPosting) => (a.messageId < b.messageId ? 1 : a.messageId > b.messageId ? -1 : a.logId < b.logId ? -1 : 1);
