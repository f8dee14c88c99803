import { coveredByMark } from '../outbox-mark.ts';
import type { OutboxEvent, PendingEvent, WebhookOutbox } from '../types.ts';
import { END, type Key, type Tables } from './shared.ts';

/**
 * What a row holds of an event: `[id, appId, type, body]` while it carries no check and no
 * endpoint is done with it (as every event of a message write does until it is finished), else the
 * whole PendingEvent. Packing a row of such arrays takes half the time of a row of objects
 * (msgpackr, 16 events of a 440-byte body: 305 against 630 ns an event, checks included) and an
 * eighth less room.
 */
type Entry = [id: string, appId: string, type: string, body: string] | PendingEvent;

const entryOf = (p: PendingEvent): Entry => (p.done.length === 0 && p.event.check === undefined ? [p.event.id, p.event.appId, p.event.type, p.event.body] : p);

const pendingOf = (e: Entry): PendingEvent => (Array.isArray(e) ? { event: { id: e[0], appId: e[1], type: e[2], body: e[3] }, done: [] } : e);

/** A row of the outbox: the events one write appended, `first` to `last` by id, with its key. */
interface Row {
  key: Key;
  first: string;
  last: string;
  events: PendingEvent[];
}

/** The first and last event id of a row's key (both the one id of a row of the older layout). */
function spanOf(key: Key): [string, string] {
  return key.length === 3 ? [key[2] as string, key[2] as string] : [key[2] as string, key[3] as string];
}

/**
 * The outbox on LMDB. A write's events are one row, `['e', owner, firstId, lastId]` → the events in
 * id order (each an Entry), not a row each: a put costs the node's event loop a few µs whatever its
 * size, and a group commit of 16 messages would otherwise pay 16 of them, and as many removes once
 * they are delivered (measured, webhooks bench: 18 µs of the node's thread per event, a quarter of
 * what webhooks cost it). Rows of one owner never overlap: the events of one write are made
 * together, in one turn of the one id generator of the owner (WebhookDispatcher.make), so no other
 * event of that owner sorts between them. Rows of the older layouts are read the same way:
 * `['e', owner, id]` → one PendingEvent, and rows of PendingEvents (every entry an object).
 *
 * As on Cassandra, the owner's low-water mark `['l', owner]` says every event below it finished;
 * rows wholly below it are removed, and events finished out of order are written only when they
 * are well above it (see progress()). Ids begin with their time, so, as there, a node restarted
 * with its clock set back past its mark makes events a recovery would not read; delivered live,
 * they are lost only to a second crash before their delivery.
 */
export class LmdbOutbox implements WebhookOutbox {
  constructor(readonly t: Tables) {}

  /**
   * Inside a write transaction. `withChange`: it is the transaction that writes the change the
   * events report, so they are in the outbox if and only if the change is, and their checks are
   * not kept (a recovery has nothing to check).
   */
  write(owner: string, events: OutboxEvent[], withChange = false): void {
    if (events.length === 0) return;
    const sorted = [...events].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    this.t.db.put(
      ['e', owner, sorted[0]!.id, sorted.at(-1)!.id],
      sorted.map((e): Entry => (withChange || e.check === undefined ? [e.id, e.appId, e.type, e.body] : { event: e, done: [] })),
    );
  }

  async append(owner: string, events: OutboxEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.t.root.transaction(() => this.write(owner, events));
  }

  private rowOf(key: Key, value: unknown): Row {
    const [first, last] = spanOf(key);
    return { key, first, last, events: key.length === 3 ? [value as PendingEvent] : (value as Entry[]).map(pendingOf) };
  }

  /** The row holding `id`, if any: the one with the greatest first id not above it. */
  private rowWith(owner: string, id: string): Row | undefined {
    for (const { key, value } of this.t.db.getRange({ start: ['e', owner, id, END], end: ['e', owner], reverse: true, limit: 1 })) {
      const row = this.rowOf(key, value);
      return row.last >= id ? row : undefined;
    }
    return undefined;
  }

  /**
   * The rows holding any of `ids` (sorted), each once: one walk over the keys from the first, so
   * a report of thousands of events reads each row's key once, not a lookup per event.
   */
  private rowsWith(owner: string, ids: string[]): Row[] {
    if (ids.length === 0) return [];
    const first = this.rowWith(owner, ids[0]!);
    const keys: Key[] = [];
    let i = 0;
    for (const key of this.t.db.getKeys({ start: first ? first.key : ['e', owner, ids[0]!], end: ['e', owner, END] })) {
      const [lo, hi] = spanOf(key);
      while (i < ids.length && ids[i]! < lo) i++;
      if (i >= ids.length) break;
      if (ids[i]! > hi) continue;
      keys.push(key);
      while (i < ids.length && ids[i]! <= hi) i++;
    }
    return keys.map((key) => this.rowOf(key, this.t.db.get(key)));
  }

  /** Writes `row` back with what is left of its events (removed when none is). */
  private rewrite(row: Row): void {
    if (row.events.length === 0) this.t.db.remove(row.key);
    else if (row.key.length === 3) this.t.db.put(row.key, row.events[0]);
    else this.t.db.put(row.key, row.events.map(entryOf));
  }

  async confirm(owner: string, ids: string[]): Promise<void> {
    await this.t.root.transaction(() => {
      for (const id of ids) {
        const row = this.rowWith(owner, id);
        const i = row?.events.findIndex((p) => p.event.id === id) ?? -1;
        if (!row || i < 0 || row.events[i]!.event.check === undefined) continue;
        const { check: _, ...event } = row.events[i]!.event;
        row.events[i] = { ...row.events[i]!, event };
        this.rewrite(row);
      }
    });
  }

  async pending(owner: string, start: string | undefined, limit: number): Promise<PendingEvent[]> {
    const low = this.t.db.get(['l', owner]) as string | undefined;
    const from = start === undefined || (low !== undefined && low > start) ? low : start;
    const out: PendingEvent[] = [];
    if (limit <= 0) return out;
    // From the row holding `from` (it may begin below it), then every later row.
    const first = from === undefined ? undefined : this.rowWith(owner, from);
    const range = { start: first ? first.key : ['e', owner, from ?? ''], end: ['e', owner, END] };
    for (const { key, value } of this.t.db.getRange(range)) {
      for (const p of this.rowOf(key, value).events) {
        if (from !== undefined && p.event.id < from) continue;
        out.push(p);
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  /**
   * Rows wholly below `low` are removed; the mark itself is kept, so that what a store skips
   * recording is not read again. Events the mark covers (see MARK_SLACK_MS) are not written;
   * without a mark, everything is.
   */
  async progress(owner: string, finished: string[], partial: PendingEvent[], low?: string): Promise<void> {
    if (finished.length === 0 && partial.length === 0 && low === undefined) return;
    const covered = coveredByMark(low);
    const done = new Set(finished.filter((id) => !covered(id)));
    const parts = new Map(partial.filter((p) => !covered(p.event.id)).map((p) => [p.event.id, p.done]));
    await this.t.root.transaction(() => {
      const mark = low ?? (this.t.db.get(['l', owner]) as string | undefined);
      if (low !== undefined) {
        this.t.db.put(['l', owner], low);
        for (const key of [...this.t.db.getKeys({ start: ['e', owner], end: ['e', owner, low] })]) {
          if (spanOf(key)[1] < low) this.t.db.remove(key);
        }
      }
      for (const row of this.rowsWith(owner, [...new Set([...done, ...parts.keys()])].sort())) {
        row.events = row.events.filter((p) => !done.has(p.event.id) && (mark === undefined || p.event.id >= mark)).map((p) => (parts.has(p.event.id) ? { ...p, done: parts.get(p.event.id)! } : p));
        this.rewrite(row);
      }
    });
  }

  /** Forgets the owner: its mark, and rows left with only events the mark covers (it is finished). */
  async retire(owner: string): Promise<void> {
    await this.t.root.transaction(() => {
      for (const key of [...this.t.db.getKeys({ start: ['e', owner], end: ['e', owner, END] })]) this.t.db.remove(key);
      this.t.db.remove(['l', owner]);
    });
  }

  async owners(): Promise<string[]> {
    // One key read per owner: each read skips to the first key after the previous owner's range.
    const out: string[] = [];
    let start: (string | number)[] = ['e', ''];
    for (;;) {
      const next = [...this.t.db.getKeys({ start, end: ['e', END], limit: 1 })][0];
      if (!next) return out;
      const owner = next[1] as string;
      out.push(owner);
      start = ['e', owner, END];
    }
  }
}
