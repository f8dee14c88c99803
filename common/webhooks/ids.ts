import { randomBytes } from 'node:crypto';

/**
 * Webhook event ids: `evt_` + 12 hex digits of milliseconds + 6 of a counter + 8 random. Ids made
 * by one generator sort in the order they were made (the time part never goes back, the counter
 * orders ids of one millisecond), which is the order an outbox is read in.
 */
export class EventIds {
  private lastMs = 0;
  private counter = 0;
  /** `evt_` and the time part of lastMs: made once per millisecond, not per id. */
  private head = 'evt_000000000000';
  private readonly tail = randomBytes(4).toString('hex');

  next(now = Date.now()): string {
    if (now > this.lastMs) {
      this.lastMs = now;
      this.counter = 0;
      this.head = `evt_${now.toString(16).padStart(12, '0')}`;
    } else if (++this.counter > 0xffffff) {
      this.lastMs++;
      this.counter = 0;
      this.head = `evt_${this.lastMs.toString(16).padStart(12, '0')}`;
    }
    return `${this.head}${this.counter.toString(16).padStart(6, '0')}${this.tail}`;
  }

  /** A bound every id this generator makes from now on sorts above (or equal to, as a prefix). */
  floor(now = Date.now()): string {
    return `evt_${Math.max(now, this.lastMs).toString(16).padStart(12, '0')}`;
  }
}

/** The creation time of an event id, in ms (NaN for a string that is not one). */
export const eventTime = (id: string): number => Number.parseInt(id.slice(4, 16), 16);

/** The smallest string that sorts after `id` and before every longer id sorting after it. */
export const justAfter = (id: string): string => `${id}~`;
