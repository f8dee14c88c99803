/**
 * Runs operations one at a time, in the order they were queued: an operation starts only after
 * every earlier one has finished (resolved or thrown). An operation that throws rejects only its
 * own promise; the queue goes on. This is what lets a chat's actor assign numbers without locks.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private queued = 0;

  /** Operations queued and not yet finished (the one running included). */
  get length(): number {
    return this.queued;
  }

  run<T>(op: () => T | Promise<T>): Promise<T> {
    this.queued++;
    const result = this.tail.then(op).finally(() => this.queued--);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Resolves once every operation queued so far has finished. */
  idle(): Promise<void> {
    return this.tail.then(() => undefined);
  }
}
