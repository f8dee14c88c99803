/** What the owner queue tracks of an event: its id, and the slot this keeps it in. */
export interface Slotted {
  event: { id: string };
  slot: number;
}

/**
 * The events an owner queue tracks, in the order they were added: an array with a slot per event
 * rather than a map by id, so tracking an event and finishing it, which every message of an
 * application with an endpoint does, cost an array write each rather than a hash table's insert,
 * lookup and delete. Finished events leave holes: those at the front go as the front finishes,
 * and the rest are squeezed out once they outnumber the events left (an event retried for hours
 * holds the front), so memory stays proportional to the events tracked.
 */
export class TrackedEvents<Tracked extends Slotted> {
  private items: (Tracked | undefined)[] = [];
  /** The first slot that may hold an event. */
  private head = 0;
  /** The slot number of `items[0]`: slots are never reused, so a finished event's is never another's. */
  private base = 0;
  private live = 0;

  get size(): number {
    return this.live;
  }

  /** Slots held, events and holes alike: what it takes in memory. */
  get slots(): number {
    return this.items.length - this.head;
  }

  add(t: Tracked): void {
    t.slot = this.base + this.items.length;
    this.items.push(t);
    this.live++;
  }

  /** Removes `t`: false if it is not here (removed already, or never added). */
  remove(t: Tracked): boolean {
    const i = t.slot - this.base;
    if (i < this.head || i >= this.items.length || this.items[i] !== t) return false;
    this.items[i] = undefined;
    this.live--;
    while (this.head < this.items.length && this.items[this.head] === undefined) this.head++;
    this.squeeze();
    return true;
  }

  private squeeze(): void {
    const length = this.items.length;
    if (this.head === length) {
      this.base += length;
      this.items = [];
      this.head = 0;
    } else if (length - this.head > 2 * this.live + 1024) {
      // Mostly holes behind a held front: the events left get new slots, after every old one.
      const kept: Tracked[] = [];
      const base = this.base + length;
      for (let i = this.head; i < length; i++) {
        const t = this.items[i];
        if (t) {
          t.slot = base + kept.length;
          kept.push(t);
        }
      }
      this.items = kept;
      this.base = base;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > length) {
      this.items = this.items.slice(this.head);
      this.base += this.head;
      this.head = 0;
    }
  }

  /** The events tracked, in the order they were added. */
  *values(): IterableIterator<Tracked> {
    for (let i = this.head; i < this.items.length; i++) {
      const t = this.items[i];
      if (t) yield t;
    }
  }

  /** The ids of the events tracked (made on each call: for reads of the store, not per event). */
  ids(): Set<string> {
    const ids = new Set<string>();
    for (const t of this.values()) ids.add(t.event.id);
    return ids;
  }
}
