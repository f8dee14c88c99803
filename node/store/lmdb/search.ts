import type { PostingsCursor, SearchIndex, SearchPosting, StoredMessage } from '../types.ts';
import { pagedCursor } from '../search-postings.ts';
import { termsOf } from '../search-terms.ts';
import { leastIdAt, uuidv7Time } from '../buckets.ts';
import { END, type Db, type Key, type Tables } from './shared.ts';
import { LmdbSearchBackfill, type BackfillProgress, type RecordOutcome } from './search-backfill.ts';
import { encodeBlock, NewestPostings, spans, uuidBytes, type NewPosting } from './search-blocks.ts';
import { PendingRecords, type PendingRecord } from './search-pending.ts';
import { RecentPostings } from './search-recent.ts';

/** Dictionary keys remembered at most; past it they are forgotten (and written again). */
const KNOWN_TERMS = 100_000;

/** The last code point: past every string with a given prefix in UTF-8 byte order, as keys sort. */
const LAST = '\u{10ffff}';

/** How long after a message's put its text is indexed, at most (with every other message of that time). */
const INDEX_DELAY_MS = 200;
/** Messages indexed in one step, at least when that many are pending. */
const INDEX_BATCH = 500;
/** Postings held in memory before they are written to LMDB (or WRITE_DELAY_MS after the first). */
const FLUSH_POSTINGS = 200_000;
const WRITE_DELAY_MS = 10_000;
/** Keys written in one transaction of a write. */
const WRITE_PUTS = 250;
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
 * time), so an acknowledged message is durably on its way into the index; the put then says the
 * transaction committed (`committed`, before it resolves), and the indexer takes the record and
 * its text from memory (search-pending.ts: only an earlier run's records are read from LMDB,
 * their text as stored). Within INDEX_DELAY_MS, or at
 * once when a search asks (`settled`), the pending messages are indexed in memory
 * (search-recent.ts), which readers merge with LMDB's blocks; every FLUSH_POSTINGS postings, or
 * WRITE_DELAY_MS after the first, they are written to LMDB, one block per term, in transactions of
 * WRITE_PUTS keys, each encoded just before it, and their records are removed after the last. The
 * event loop is free between batches of INDEX_BATCH messages and between transactions: encoding a
 * whole write at once, or 2,000 messages' words, held acknowledgements for 100 to 270 ms (a p99 of
 * 245 ms at 6,000 sends/s, against 15 without the index). A word of every message then costs one
 * write for thousands of messages: a key per word and message doubled the sends bench's CPU per
 * send, and a write every 200 ms (each dirtying a page per word) raised the acknowledgements' p99
 * at 6,000 sends/s from 14 to 110 ms, its commits holding LMDB's one writer. After a crash the 'p'
 * records left are indexed at the next open's first `settled` or put.
 *
 * Blocks of a term may overlap in time (a message indexed after a newer one: a late commit, an
 * edit), so a reader takes them newest-first by their newest id and stops at the first whose
 * newest id is below every posting it still needs; it cuts each block to the range by a binary
 * search on its packed ids (NewestPostings), and starts BLOCK_SPAN_MS past `before`, where the
 * newest block that can hold an older id ends.
 */
export class LmdbSearch implements SearchIndex, RecordOutcome {
  /** Dictionary keys (app and term) of committed transactions: not written again while remembered. */
  private readonly known = new Set<string>();
  /** Block ids grow across the node's runs: a block never replaces another with the same newest id (an edit's). */
  private readonly blockBase = Date.now() * 1000;
  private blocks = 0;
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
  /** What is to be indexed (search-pending.ts). */
  private readonly pendingRecords: PendingRecords;
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
    this.pendingRecords = new PendingRecords(t);
    if (enabled && messages) this.backfiller = new LmdbSearchBackfill(t, messages, (entries) => this.pendingRecords.record(entries), this, () => this.settled(), tuning.backfillChunk);
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

  /**
   * In a message put's transaction: the text of `messages` is to be indexed (one record for all of
   * them). Returns the record's id, which the put passes to `committed` once its transaction
   * committed (before the put resolves) or to `aborted`; none when there is nothing to index.
   */
  pending(messages: readonly StoredMessage[]): string | undefined {
    if (!this.enabled || messages.length === 0) return undefined;
    // The text as put, for the indexer: never read back.
    return this.pendingRecords.record(
      messages.flatMap((m) => [m.id, m.appId, m.chatId]),
      messages.map((m) => m.content),
    );
  }

  /** The transaction that wrote `record` committed: it is indexed within INDEX_DELAY_MS, or by the next `settled`. */
  committed(record: string): void {
    if (!this.pendingRecords.committed(record)) return;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.settled().catch(() => undefined);
    }, INDEX_DELAY_MS);
  }

  /** The transaction that wrote `record` did not commit: there is nothing to index. */
  aborted(record: string): void {
    this.pendingRecords.aborted(record);
  }

  /** Resolves once every message whose put resolved before the call is indexed. */
  settled(): Promise<void> {
    const run = this.running.then(() => this.indexPending());
    this.running = run.catch(() => undefined);
    return run;
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
      const { records, count } = this.pendingRecords.take(INDEX_BATCH, this.indexed);
      if (records.length === 0) break;
      this.addToRecent(records);
      for (const { key } of records) {
        this.indexed.add(key[2] as string);
        this.unwritten.push(key);
      }
      if (this.recent.size >= this.writePostings) {
        // A failed write leaves its postings to the next (they stay in memory, their records in LMDB).
        const writing = this.write().catch(() => undefined);
        // Memory stays bounded: past twice the threshold, indexing waits for the write.
        if (this.recent.size >= 2 * this.writePostings) await writing;
      }
      if (count < INDEX_BATCH && !this.pendingRecords.waiting) break;
      // Sends go on between batches (a batch's words take a few milliseconds to find).
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (this.recent.size > 0) this.writeTimer ??= setTimeout(() => void this.write().catch(() => undefined), WRITE_DELAY_MS);
  }

  /** The messages of `records`, their words' postings added to `recent`. */
  private addToRecent(records: readonly PendingRecord[]): void {
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
        // Blocks are encoded a transaction's worth at a time, the event loop free between them.
        let puts: [Key, unknown][] = [];
        const commit = async () => {
          const these = puts;
          puts = [];
          await this.t.root.transaction(() => {
            for (const [key, value] of these) this.t.db.put(key, value);
          });
          await new Promise((resolve) => setImmediate(resolve));
        };
        for (const put of this.putsOf(postings, terms)) {
          puts.push(put);
          if (puts.length >= WRITE_PUTS) await commit();
        }
        if (puts.length > 0) await commit();
        // Once every block is written: a crash before leaves records whose messages are indexed again (harmlessly).
        for (let i = 0; i < records.length; i += WRITE_PUTS) {
          await this.t.root.transaction(() => {
            for (const key of records.slice(i, i + WRITE_PUTS)) this.t.db.remove(key);
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

  /** The puts of a write: each term's postings (oldest first) in blocks of at most BLOCK_SPAN_MS, then the new terms' dictionary keys. */
  private *putsOf(held: RecentPostings, terms: Set<string>): Iterable<[Key, unknown]> {
    for (const { appId, term, postings } of held.terms()) {
      for (const block of spans(postings, BLOCK_SPAN_MS)) yield [['q', appId, term, block[0]!.messageId, (this.blockBase + this.blocks++).toString(36)], encodeBlock(block)];
    }
    for (const key of terms) {
      const [appId, term] = key.split('\u0000') as [string, string];
      yield [['Q', appId, term], true];
    }
  }

  cursor(appId: string, terms: readonly string[], range: { before?: string; after?: string }): PostingsCursor {
    return pagedCursor((r, limit) => this.postings(appId, terms, r, limit), range);
  }

  /** Of several terms, one floor for all: past the first, a term's postings older than the newest `limit` so far are not decoded. */
  async postings(appId: string, term: string | readonly string[], range: { before?: string; after?: string }, limit: number): Promise<SearchPosting[]> {
    if (limit <= 0) return [];
    const { before, after } = range;
    const newest = new NewestPostings(limit, before, after);
    for (const t of typeof term === 'string' ? [term] : term) {
      // What is indexed and not yet (or being) written: in memory.
      for (const held of [this.recent, this.writing]) if (held) newest.add(held.read(appId, t, before, after, limit));
      const blocks = this.t.db.getRange({
        // Newest block first, from the last that can hold an id below `before` down to those past `after`.
        start: ['q', appId, t, before === undefined ? END : leastIdAt(uuidv7Time(before) + BLOCK_SPAN_MS + 1)],
        end: after === undefined ? ['q', appId, t] : ['q', appId, t, after, END],
        reverse: true,
      });
      for (const { key, value } of blocks) {
        // Every id of this block and the ones after it is older than the newest `limit`.
        if (newest.enough(key[3] as string)) break;
        newest.addBlock(value as Buffer);
      }
    }
    return newest.result();
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
