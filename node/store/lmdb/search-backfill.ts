import { indexed } from '../search-terms.ts';
import { storedMessage } from './message-record.ts';
import { END, type Db, type Key, type Tables } from './shared.ts';

/** Messages read in one backfill transaction (and recorded there as one pending record). */
export const BACKFILL_CHUNK = 2_000;

/** The search table's key of the backfill's state (SavedBackfill); absent: never begun. */
const STATE: Key = ['meta', 'backfill'];

/** Where a writer of pending records says how its transaction ended (LmdbSearch.committed, aborted). */
export interface RecordOutcome {
  committed(record: string): void;
  aborted(record: string): void;
}

/** What the search table keeps of the backfill, written in the transaction of each chunk. */
interface SavedBackfill {
  /** Every message stored when the last chunk ran is recorded for indexing. */
  complete: boolean;
  /** The last messages-table key read (absent before the first chunk). */
  after?: Key;
  /** Messages recorded for indexing, and message keys read, since the backfill began. */
  messages: number;
  scanned: number;
}

export interface BackfillProgress {
  /** `off`: the index is off; `stopped`: closed before the end (it goes on at the next open). */
  state: 'off' | 'running' | 'complete' | 'stopped' | 'failed';
  /** Messages recorded for indexing since the backfill began (over every run). */
  messages: number;
  /** Message keys read since it began (deleted and empty messages too). */
  scanned: number;
  /** Messages read by this run: less than `scanned` when it went on from where an earlier run stopped. */
  scannedNow: number;
  /** Messages read before this run began (0 when it began from the start). */
  resumedAt: number;
  error?: unknown;
}

/**
 * Puts the messages written before the index existed (or while it was off) into it: walks the
 * messages table ('m' keys, LmdbMessages) in key order, a transaction per chunk of BACKFILL_CHUNK
 * messages, each writing one pending record of the chunk's messages (`record`: the indexer reads
 * their text as stored) and, in the same transaction, how far it got. So a crash or a close loses
 * nothing and redoes nothing: the next open goes on after the last chunk committed, and a record
 * that was not indexed yet is indexed as every pending record is. Each chunk is indexed
 * (`index`) before the next is read, so at most one chunk of the backfill is pending at a time.
 *
 * A message put while it runs is indexed by its own put as well; a message indexed twice is
 * harmless (readers drop duplicate postings). Tombstones and messages without text are skipped.
 */
export class LmdbSearchBackfill {
  private running: Promise<BackfillProgress> | undefined;
  private stopping = false;
  private progress: BackfillProgress = { state: 'off', messages: 0, scanned: 0, scannedNow: 0, resumedAt: 0 };

  constructor(
    /** The search table: where the state is kept, and the pending records go. */
    private readonly t: Tables,
    private readonly messages: Db,
    /** In a write transaction: one pending record of these [id, app, log] triples (LmdbSearch.record), its id. */
    private readonly record: (entries: string[]) => string,
    /** Told how the transaction of each record ended. */
    private readonly outcome: RecordOutcome,
    /** Indexes what is pending (LmdbSearch.settled). */
    private readonly index: () => Promise<void>,
    private readonly chunk = BACKFILL_CHUNK,
  ) {}

  /** Begins the backfill unless it is complete or running: resolves with its progress once it ends. */
  start(): Promise<BackfillProgress> {
    if (this.running) return this.running;
    const saved = this.t.db.get(STATE) as SavedBackfill | undefined;
    if (saved?.complete) {
      this.progress = { state: 'complete', messages: saved.messages, scanned: saved.scanned, scannedNow: 0, resumedAt: saved.scanned };
      return Promise.resolve({ ...this.progress });
    }
    this.stopping = false;
    const scanned = saved?.scanned ?? 0;
    this.progress = { state: 'running', messages: saved?.messages ?? 0, scanned, scannedNow: 0, resumedAt: scanned };
    const run = this.run().then(
      (complete) => {
        this.progress.state = complete ? 'complete' : 'stopped';
        return { ...this.progress };
      },
      (error: unknown) => {
        this.progress = { ...this.progress, state: 'failed', error };
        throw error;
      },
    );
    // Failure is in `progress` and in what `start` returned; the store itself reports nothing.
    run.catch(() => undefined);
    this.running = run;
    return run;
  }

  /** The promise of the run under way or last ended, if any. */
  get current(): Promise<BackfillProgress> | undefined {
    return this.running;
  }

  status(): BackfillProgress {
    return { ...this.progress };
  }

  /** Stops after the chunk under way (its transaction commits or not as it would anyway). */
  async stop(): Promise<void> {
    const run = this.running;
    if (!run) return;
    this.stopping = true;
    await run.catch(() => undefined);
    this.running = undefined;
  }

  /** Forgets how far the backfill got and that it completed, and begins it again from the first message. */
  async restart(): Promise<BackfillProgress> {
    await this.stop();
    await this.t.root.transaction(() => this.t.db.remove(STATE));
    return this.start();
  }

  /** Chunk after chunk until the last message (true) or a stop (false). */
  private async run(): Promise<boolean> {
    // Begun after the open that asked for it returns: opening does not wait for any of it.
    await new Promise((resolve) => setImmediate(resolve));
    while (!this.stopping) {
      const complete = await this.step();
      await this.index();
      if (complete) return true;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return false;
  }

  /** One chunk, in one write transaction: whether the walk reached the last message. */
  private async step(): Promise<boolean> {
    let record: string | undefined;
    const written = this.t.root.transaction(() => {
      // Read inside the transaction: a restart between two chunks is seen by the next.
      const saved = (this.t.db.get(STATE) as SavedBackfill | undefined) ?? { complete: false, messages: 0, scanned: 0 };
      if (saved.complete) return { next: saved, read: 0 };
      // Every 'm' key has five elements, so [...after, END] is past `after` and before the next key.
      const start = saved.after ? [...saved.after, END] : ['m'];
      const entries: string[] = [];
      let after = saved.after;
      let read = 0;
      for (const { key, value } of this.messages.getRange({ start, end: ['m', END], limit: this.chunk })) {
        after = key;
        read++;
        const m = storedMessage(value);
        if (indexed(m, undefined)) entries.push(m.id, m.appId, m.chatId);
      }
      if (entries.length > 0) record = this.record(entries);
      const next: SavedBackfill = { complete: read < this.chunk, messages: saved.messages + entries.length / 3, scanned: saved.scanned + read, ...(after ? { after } : {}) };
      this.t.db.put(STATE, next);
      return { next, read };
    });
    const { next, read } = await written.catch((error: unknown) => {
      if (record !== undefined) this.outcome.aborted(record);
      throw error;
    });
    if (record !== undefined) this.outcome.committed(record);
    // Committed: what the progress says is durable.
    this.progress = { ...this.progress, messages: next.messages, scanned: next.scanned, scannedNow: this.progress.scannedNow + read };
    return next.complete;
  }
}
