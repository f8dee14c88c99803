/**
 * The most recently set keys of a map, at least the newest `max / 2` and never more than `max`:
 * get, set and delete in constant time.
 *
 * Why not one Map whose first key is deleted past `max`: V8 leaves a deleted entry as a hole until
 * the table is rebuilt, and finding the first key walks every hole before it. A full Map of 50,000
 * keys that dropped its oldest at each insert paid about 20 µs an insert; in a cluster node, the
 * search index's memory of the rows it wrote was half of its CPU. Here the keys set lately are in
 * `newer`; when it holds max / 2 keys it becomes `older`, and the previous `older` is dropped whole.
 *
 * Setting a key again moves it among the newest, so a key in use stays (least recently set goes
 * first, by halves).
 */
export class RecentMap<K, V> {
  private newer = new Map<K, V>();
  private older = new Map<K, V>();
  private readonly half: number;

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 2) throw new RangeError(`a RecentMap holds at least 2 keys, not ${max}`);
    this.half = Math.floor(max / 2);
  }

  get(key: K): V | undefined {
    return this.newer.has(key) ? this.newer.get(key) : this.older.get(key);
  }

  has(key: K): boolean {
    return this.newer.has(key) || this.older.has(key);
  }

  set(key: K, value: V): this {
    this.older.delete(key);
    this.newer.set(key, value);
    if (this.newer.size >= this.half) {
      this.older = this.newer;
      this.newer = new Map();
    }
    return this;
  }

  delete(key: K): boolean {
    const inNewer = this.newer.delete(key);
    return this.older.delete(key) || inNewer;
  }

  get size(): number {
    return this.newer.size + this.older.size;
  }

  /** Every entry, the older half first; deleting the current one while iterating is allowed. */
  *entries(): IterableIterator<[K, V]> {
    yield* this.older;
    yield* this.newer;
  }
}

/** A RecentMap of keys alone. */
export class RecentSet<K> {
  private readonly map: RecentMap<K, true>;

  constructor(max: number) {
    this.map = new RecentMap(max);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  add(key: K): this {
    this.map.set(key, true);
    return this;
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  get size(): number {
    return this.map.size;
  }
}
