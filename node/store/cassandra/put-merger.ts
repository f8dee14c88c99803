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

export class PutMerger {
  private waiting: Waiting[] = [];
  private scheduled = false;

  constructor(private readonly db: Cql) {}

  /** Sends `put` with the others handed over in this turn of the event loop; resolves once it is written. */
  write(put: MergeablePut): Promise<void> {
    let statements = 0;
    let bytes = 0;
    for (const batch of put.batches) {
      statements += batch.length;
      for (const s of batch) bytes += sizeOf(s);
    }
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ put, statements, bytes, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
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

/** About the bytes a statement's values take in a request. */
function sizeOf(statement: BatchStatement): number {
  let bytes = 0;
  for (const value of statement.params) bytes += typeof value === 'string' ? value.length * 3 : 16;
  return bytes;
}
