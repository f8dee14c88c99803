import type { Database, RootDatabase } from 'lmdb';
import type { UsageDelta, UsageSnapshot, UsageStore } from '../types/usage.ts';
import { END, type Key } from './shared.ts';

interface Totals {
  users: number;
  chats: number;
  messages: number;
  /** Absent on totals written before attachments: 0. */
  fileBytes?: number;
}

/**
 * The embedded usage store: ['t', app] the totals, ['d', app, day] that day's messages,
 * ['p', app, day, node] a node's peak that day, ['c', app] the newest concurrent-user sample,
 * ['k', app, key] a key's last use. One write transaction per flush.
 */
export class LmdbUsage implements UsageStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Database<unknown, Key>,
  ) {}

  record(nodeId: string, deltas: UsageDelta[]): Promise<void> {
    return this.root.transaction(() => {
      for (const d of deltas) this.add(nodeId, d);
    });
  }

  private add(nodeId: string, d: UsageDelta): void {
    const totals = (this.db.get(['t', d.appId]) as Totals | undefined) ?? { users: 0, chats: 0, messages: 0 };
    let messages = 0;
    for (const [day, n] of Object.entries(d.messages)) {
      messages += n;
      this.db.put(['d', d.appId, day], ((this.db.get(['d', d.appId, day]) as number | undefined) ?? 0) + n);
    }
    const fileBytes = d.fileBytes ?? 0;
    if (d.users || d.chats || messages || fileBytes) {
      this.db.put(['t', d.appId], { users: totals.users + d.users, chats: totals.chats + d.chats, messages: totals.messages + messages, fileBytes: (totals.fileBytes ?? 0) + fileBytes });
    }
    if (d.concurrent) {
      for (const [day, peak] of Object.entries(d.concurrent.peaks)) {
        const key = ['p', d.appId, day, nodeId];
        if (peak > ((this.db.get(key) as number | undefined) ?? -1)) this.db.put(key, peak);
      }
      const latest = this.db.get(['c', d.appId]) as { users: number; at: string } | undefined;
      if (!latest || latest.at <= d.concurrent.at) this.db.put(['c', d.appId], { users: d.concurrent.current, at: d.concurrent.at });
    }
    for (const [keyId, at] of Object.entries(d.keysUsed)) {
      const seen = this.db.get(['k', d.appId, keyId]) as string | undefined;
      if (!seen || seen < at) this.db.put(['k', d.appId, keyId], at);
    }
  }

  async read(appId: string, days: string[]): Promise<UsageSnapshot> {
    const totals = (this.db.get(['t', appId]) as Totals | undefined) ?? { users: 0, chats: 0, messages: 0 };
    const messagesByDay: Record<string, number> = {};
    const peakByDay: Record<string, number> = {};
    for (const day of days) {
      const n = this.db.get(['d', appId, day]) as number | undefined;
      if (n !== undefined) messagesByDay[day] = n;
      for (const { value } of this.db.getRange({ start: ['p', appId, day], end: ['p', appId, day, END] })) {
        peakByDay[day] = Math.max(peakByDay[day] ?? 0, value as number);
      }
    }
    const current = this.db.get(['c', appId]) as { users: number; at: string } | undefined;
    return { users: totals.users, chats: totals.chats, messages: totals.messages, fileBytes: totals.fileBytes ?? 0, messagesByDay, peakByDay, ...(current ? { current } : {}) };
  }

  async keysLastUsed(appId: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const { key, value } of this.db.getRange({ start: ['k', appId], end: ['k', appId, END] })) out[String(key[2])] = value as string;
    return out;
  }

  forget(appId: string): Promise<void> {
    return this.root.transaction(() => {
      for (const kind of ['d', 'p', 'k']) {
        for (const key of this.db.getKeys({ start: [kind, appId], end: [kind, appId, END] })) this.db.remove(key);
      }
      this.db.remove(['t', appId]);
      this.db.remove(['c', appId]);
    });
  }
}
