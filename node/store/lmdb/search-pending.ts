import { END, type Key, type Tables } from './shared.ts';

/** A pending record: its key, its messages as [id, app, log] triples, and their texts as put (else read as stored). */
export interface PendingRecord {
  key: Key;
  ids: string[];
  texts?: string[];
}

/**
 * The pending records of the search index (search.ts), ['p', firstId, recordId] → [id, app, log, …]:
 * what is to be indexed. A record is kept as the JSON text of that list, as a message is and for
 * the same reason (message-record.ts: msgpack wrote its strings a character at a time, 66 µs a
 * record of 15 messages in the sends bench); records kept as arrays by earlier versions are read
 * as they are. A writer puts one in its transaction (`record`) and then says whether the
 * transaction committed (`committed`, before its put resolves) or not (`aborted`); the indexer
 * takes this run's committed records from memory, with their text, and reads from LMDB only the
 * records an earlier run left (a crash, a close before their write), once, on its first `take`.
 * Reading every 'p' key at each indexing cost a read of every record indexed but not yet written
 * (thousands), and fell 8 s behind a fill of 4,600 sends/s, which the first searches then waited on.
 */
export class PendingRecords {
  /** Makes record ids unique across the node's runs. */
  private readonly run = `${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}`;
  private records = 0;
  /** Records of this run whose transaction has not ended, by record id; those committed, in order. */
  private readonly inFlight = new Map<string, PendingRecord>();
  private ready: PendingRecord[] = [];
  /** Whether the records left by earlier runs have all been read, and from where the read goes on. */
  private leftoversRead = false;
  private leftoversFrom: Key = ['p'];

  constructor(private readonly t: Tables) {}

  /** In a write transaction: a record of these [id, app, log] triples (their text read as stored unless given); its id. */
  record(entries: string[], texts?: string[]): string {
    const id = `${this.run}.${this.records++}`;
    const key: Key = ['p', entries[0]!, id];
    this.t.db.put(key, JSON.stringify(entries));
    this.inFlight.set(id, { key, ids: entries, ...(texts ? { texts } : {}) });
    return id;
  }

  /** The transaction of `record` committed: false if it is not one of this run's in flight. */
  committed(record: string): boolean {
    const pending = this.inFlight.get(record);
    if (!pending) return false;
    this.inFlight.delete(record);
    this.ready.push(pending);
    return true;
  }

  aborted(record: string): void {
    this.inFlight.delete(record);
  }

  /** Whether committed records wait in memory. */
  get waiting(): boolean {
    return this.ready.length > 0;
  }

  /**
   * Records to index, of at least `most` messages when that many wait (in memory first, then
   * those earlier runs left), but none whose id is in `skip`; and how many messages they hold.
   */
  take(most: number, skip: ReadonlySet<string>): { records: PendingRecord[]; count: number } {
    let count = 0;
    let taken = 0;
    while (taken < this.ready.length && count < most) count += this.ready[taken++]!.ids.length / 3;
    const records = this.ready.splice(0, taken);
    if (!this.leftoversRead && count < most) count += this.readLeftovers(records, most - count, skip);
    return { records, count };
  }

  /** Adds to `records` those an earlier run left, up to `most` messages, going on from the last read; returns how many messages. */
  private readLeftovers(records: PendingRecord[], most: number, skip: ReadonlySet<string>): number {
    let count = 0;
    const own = `${this.run}.`;
    for (const { key, value } of this.t.db.getRange({ start: this.leftoversFrom, end: ['p', END] })) {
      this.leftoversFrom = key;
      const id = key[2] as string;
      if (id.startsWith(own) || skip.has(id)) continue;
      const ids = (typeof value === 'string' ? JSON.parse(value) : value) as string[];
      records.push({ key, ids });
      count += ids.length / 3;
      if (count >= most) break;
    }
    if (count < most) this.leftoversRead = true;
    // This background read began a read snapshot that every read of this turn would share
    // (lmdb-js renews it a macrotask later): let the next read take a fresh one instead, so a
    // commit of another instance on the same path that lands meanwhile is seen.
    this.t.root.resetReadTxn();
    return count;
  }
}
