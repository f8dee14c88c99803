import type { OutboxEvent, PendingEvent, WebhookOutbox } from '../types.ts';
import { END, type Tables } from './shared.ts';

/** ['e', owner, id] → PendingEvent. A finished event is removed (LMDB reclaims the space at once). */
export class LmdbOutbox implements WebhookOutbox {
  constructor(readonly t: Tables) {}

  /** Inside a write transaction (the one that writes the change the events report). */
  write(owner: string, events: OutboxEvent[]): void {
    for (const event of events) this.t.db.put(['e', owner, event.id], { event, done: [] } satisfies PendingEvent);
  }

  async append(owner: string, events: OutboxEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.t.root.transaction(() => this.write(owner, events));
  }

  async confirm(owner: string, ids: string[]): Promise<void> {
    await this.t.root.transaction(() => {
      for (const id of ids) {
        const p = this.t.db.get(['e', owner, id]) as PendingEvent | undefined;
        if (p?.event.check === undefined) continue;
        const { check: _, ...event } = p.event;
        this.t.db.put(['e', owner, id], { ...p, event });
      }
    });
  }

  async pending(owner: string, from: string | undefined, limit: number): Promise<PendingEvent[]> {
    return [...this.t.db.getRange({ start: ['e', owner, from ?? ''], end: ['e', owner, END], limit })].map((e) => e.value as PendingEvent);
  }

  /** Finished events are removed, and so is anything below `low` (normally nothing is left there). */
  async progress(owner: string, finished: string[], partial: PendingEvent[], low?: string): Promise<void> {
    if (finished.length === 0 && partial.length === 0 && low === undefined) return;
    await this.t.root.transaction(() => {
      for (const id of finished) this.t.db.remove(['e', owner, id]);
      if (low !== undefined) for (const key of [...this.t.db.getKeys({ start: ['e', owner, ''], end: ['e', owner, low] })]) this.t.db.remove(key);
      for (const p of partial) if (this.t.db.doesExist(['e', owner, p.event.id])) this.t.db.put(['e', owner, p.event.id], p);
    });
  }

  /** Nothing to forget: an owner is listed while it has events, and finished ones are removed. */
  async retire(): Promise<void> {}

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
