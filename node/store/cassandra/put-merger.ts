import type { BatchStatement, Cql } from '../../../common/cassandra/index.ts';
import { writeTimestamp, type InDoubtPut } from './unknown-outcomes.ts';

/**
 * Puts of several chats sent as one request. A chat's actor writes its next batch as soon as the
 * previous one is durable, so at a few dozen messages a second per chat each put is one or two
 * messages, and each would be a request of its own; what a request costs Cassandra beyond its rows
 * is about as much again as a row (bench/micro/cassandra-writes.ts `--groups`: 300 µs of CPU per
 * row one per request, 211 four per request, 151 eight). So the puts handed over while the event
 * loop runs one turn (chats whose previous writes came back in one read of the socket, sends
 * that arrived together) leave together in one unlogged batch, after that turn (setImmediate).
 *
 * Guarantees:
 * - A put's statements go out whole in one request, or (a put too large to share one) as its own
 *   batches, exactly as a put sent alone; it resolves once its request succeeded, and is rejected
 *   with that request's error otherwise (its outcome is then unknown, as any put's: see
 *   unknown-outcomes.ts).
 * - A put's timestamp is taken when it is sent, the same for every put of a request; a later put
 *   of the same chat is sent after this one resolved, so it gets a later timestamp and wins. The
 *   put keeps its timestamp: a write again of it (writeAgain) carries the same one.
 * - The rows of one partition stay one mutation, applied atomically, as in a put sent alone;
 *   merging adds partitions to a request, never splits one.
 * - A request stays far under Cassandra's batch limits: `MERGE_LIMITS`.
 *
 * A put's index rows (`index`: the search index's postings, a row per word of each message) need
 * no atomicity with its messages, and at a row per word they would fill a request alone (two
 * messages' words are past MERGE_LIMITS.statements), so the puts of a turn stopped sharing
 * requests (the search bench's fill: 220 sends/s against 514 without the index). They travel
 * apart: every index row handed over, sorted by partition so the rows of one partition (an
 * hour's shard of postings, search.ts) are one mutation, in requests of `INDEX_LIMITS`. The index
 * rows are a group commit of their own: while INDEX_FLUSHES flushes of them are in flight, the
 * rows handed over wait, and leave together when one comes back, so the busier the node, the
 * more rows share each partition (an idle node's leave at once, after the turn as a put's do). A
 * put resolves once its own requests and every request holding one of its index rows succeeded;
 * it is rejected (in doubt, written again whole with its index rows) if any failed.
 */
export const MERGE_LIMITS = {
  /**
   * Most statements in one merged request. Cassandra logs a warning (at most once a minute) for an
   * unlogged batch over 10 partitions; a request of a few chats' puts stays about there.
   */
  statements: 16,
  /**
   * Most bytes of values in one merged request (about what Cassandra counts against its batch size
   * limits: it refuses a batch of several partitions over 50 KiB and warns over 5 KiB, once a minute).
   */
  bytes: 16 * 1024,
};

/** Most index rows (and bytes of their values) in one request: sorted by partition, far under the 50 KiB Cassandra refuses. */
export const INDEX_LIMITS = {
  statements: 96,
  bytes: 24 * 1024,
};

/** Flushes of index rows in flight at once (see PutMerger): past them, rows wait for one to come back. */
export const INDEX_FLUSHES = 2;

/** A put on its way: its statements, and the timestamp set when it is sent. */
export interface MergeablePut extends InDoubtPut {
  timestamp: number;
}

interface Waiting {
  put: MergeablePut;
  statements: number;
  bytes: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

interface WaitingIndex {
  rows: readonly BatchStatement[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class PutMerger {
  private waiting: Waiting[] = [];
  private waitingIndex: WaitingIndex[] = [];
  private indexFlushes = 0;
  private scheduled = false;

  constructor(private readonly db: Cql) {}

  /** Sends `put` with the others handed over in this turn of the event loop; resolves once it is written, index rows too. */
  write(put: MergeablePut): Promise<void> {
    const written = this.writeRows(put);
    if (!put.index?.length) return written;
    const rows = put.index;
    const indexed = new Promise<void>((resolve, reject) => {
      this.waitingIndex.push({ rows, resolve, reject });
      this.schedule();
    });
    // Both settle (a rejection of one is not left unhandled while the other is awaited).
    return Promise.allSettled([written, indexed]).then(([a, b]) => {
      if (a.status === 'rejected') throw a.reason;
      if (b.status === 'rejected') throw b.reason;
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private writeRows(put: MergeablePut): Promise<void> {
    let statements = 0;
    let bytes = 0;
    for (const batch of put.batches) {
      statements += batch.length;
      for (const s of batch) bytes += sizeOf(s);
    }
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ put, statements, bytes, resolve, reject });
      this.schedule();
    });
  }

  private flush(): void {
    this.scheduled = false;
    this.flushIndex();
    const all = this.waiting;
    this.waiting = [];
    let group: Waiting[] = [];
    let statements = 0;
    let bytes = 0;
    for (const w of all) {
      if (w.statements > MERGE_LIMITS.statements || w.bytes > MERGE_LIMITS.bytes) {
        this.send([w]);
        continue;
      }
      if (statements + w.statements > MERGE_LIMITS.statements || bytes + w.bytes > MERGE_LIMITS.bytes) {
        this.send(group);
        group = [];
        statements = 0;
        bytes = 0;
      }
      group.push(w);
      statements += w.statements;
      bytes += w.bytes;
    }
    if (group.length > 0) this.send(group);
  }

  private flushIndex(): void {
    // The rows wait for a flush in flight to come back (which flushes them).
    if (this.waitingIndex.length === 0 || this.indexFlushes >= INDEX_FLUSHES) return;
    const all = this.waitingIndex;
    this.waitingIndex = [];
    const { requests, of } = indexRequests(all.map((w) => w.rows));
    // No timestamp of their own: a row of the index is written once and never changed.
    const sent = requests.map((r) => this.db.batch(r, { isIdempotent: true }));
    all.forEach((w, i) => {
      Promise.all(of[i]!.map((r) => sent[r]!)).then(() => w.resolve(), w.reject);
    });
    this.indexFlushes++;
    void Promise.allSettled(sent).then(() => {
      this.indexFlushes--;
      this.flushIndex();
    });
  }

  private send(group: Waiting[]): void {
    const timestamp = writeTimestamp();
    for (const w of group) w.put.timestamp = timestamp;
    const options = { timestamp, isIdempotent: true };
    // One put: its batches as they are (each single-partition batch one mutation, none over a limit).
    const requests = group.length === 1 ? group[0]!.put.batches.map((b) => this.db.batch(b, options)) : [this.db.batch(group.flatMap((w) => w.put.batches.flat()), options)];
    Promise.all(requests).then(
      () => {
        for (const w of group) w.resolve();
      },
      (error: unknown) => {
        for (const w of group) w.reject(error);
      },
    );
  }
}

/** The index rows of this turn's puts, sorted by partition, in requests of INDEX_LIMITS. */
export interface IndexRequests {
  requests: BatchStatement[][];
  /** Per put (in order), the requests holding its rows. */
  of: number[][];
}

/** Cuts the index rows of several puts into requests: the rows of one partition adjacent, each request within INDEX_LIMITS. */
export function indexRequests(puts: readonly (readonly BatchStatement[])[]): IndexRequests {
  const rows = puts.flatMap((list, put) => list.map((statement) => ({ statement, put, key: partitionOf(statement) })));
  rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const requests: BatchStatement[][] = [];
  const of: Set<number>[] = puts.map(() => new Set());
  let bytes = 0;
  for (const { statement, put } of rows) {
    const size = sizeOf(statement);
    const last = requests.at(-1);
    if (!last || last.length >= INDEX_LIMITS.statements || bytes + size > INDEX_LIMITS.bytes) {
      requests.push([statement]);
      bytes = size;
    } else {
      last.push(statement);
      bytes += size;
    }
    of[put]!.add(requests.length - 1);
  }
  return { requests, of: of.map((s) => [...s]) };
}

/**
 * Rows of one partition sort together: the statement's table, then its first values, which are
 * the partition key's (app, hour, shard for a posting; app, term for an hour; app, lead for a term)
 * and then clustering values, which only order rows within it.
 */
const partitionOf = (s: BatchStatement) => `${s.query}\u0000${s.params.slice(0, 3).join('\u0000')}`;

/** About the bytes a statement's values take in a request. */
function sizeOf(statement: BatchStatement): number {
  let bytes = 0;
  for (const value of statement.params) bytes += typeof value === 'string' ? value.length * 3 : 16;
  return bytes;
}
