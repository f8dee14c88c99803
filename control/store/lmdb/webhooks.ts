import type { Database, RootDatabase } from 'lmdb';
import type { WebhookDelivery, WebhookEndpoint, WebhookStore } from '../types/webhooks.ts';
import { definedFields, END, type Key } from './shared.ts';
/** Attempts kept per endpoint. */
const KEPT_DELIVERIES = 100;

/**
 * The embedded webhook endpoints: ['w', app, id]. The count check and the create are one write
 * transaction.
 *
 * Each endpoint's delivery log: ['d', app, endpoint, at, id] → the attempt, read backwards for
 * newest first (by `at`, then id, both descending); ['i', app, endpoint, id] → its `at`, to find an
 * attempt by id. A write keeps the newest 100 of each endpoint it touched, in its transaction: the
 * trim skips 100 entries and removes what follows, so it costs O(100 + attempts written). Attempts
 * for an endpoint that is not there are dropped, and deleting an endpoint removes its log with it.
 */
export class LmdbWebhooks implements WebhookStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Database<unknown, Key>,
  ) {}

  private all(appId: string): WebhookEndpoint[] {
    return [...this.db.getRange({ start: ['w', appId], end: ['w', appId, END] })].map((e) => e.value as WebhookEndpoint);
  }

  create(endpoint: WebhookEndpoint, limit: number): Promise<'created' | 'limit'> {
    return this.root.transaction(() => {
      if (this.all(endpoint.appId).length >= limit) return 'limit' as const;
      this.db.put(['w', endpoint.appId, endpoint.id], endpoint);
      return 'created' as const;
    });
  }

  async list(appId: string): Promise<WebhookEndpoint[]> {
    return this.all(appId).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async get(appId: string, id: string): Promise<WebhookEndpoint | undefined> {
    return this.db.get(['w', appId, id]) as WebhookEndpoint | undefined;
  }

  update(endpoint: WebhookEndpoint): Promise<'updated' | 'not-found'> {
    return this.root.transaction(() => {
      if (this.db.get(['w', endpoint.appId, endpoint.id]) === undefined) return 'not-found' as const;
      this.db.put(['w', endpoint.appId, endpoint.id], endpoint);
      return 'updated' as const;
    });
  }

  delete(appId: string, id: string): Promise<'deleted' | 'not-found'> {
    return this.root.transaction(() => {
      if (this.db.get(['w', appId, id]) === undefined) return 'not-found' as const;
      this.db.remove(['w', appId, id]);
      for (const prefix of ['d', 'i']) {
        for (const key of [...this.db.getKeys({ start: [prefix, appId, id], end: [prefix, appId, id, END] })]) this.db.remove(key);
      }
      return 'deleted' as const;
    });
  }

  async recordDeliveries(records: WebhookDelivery[]): Promise<void> {
    if (records.length === 0) return;
    await this.root.transaction(() => {
      const touched = new Map<string, [string, string]>();
      for (const record of records) {
        const { appId, endpointId, id, at } = record;
        if (this.db.get(['w', appId, endpointId]) === undefined) continue;
        // The same attempt recorded again replaces the earlier record (its `at` may differ).
        const earlier = this.db.get(['i', appId, endpointId, id]) as string | undefined;
        if (earlier !== undefined) this.db.remove(['d', appId, endpointId, earlier, id]);
        this.db.put(['d', appId, endpointId, at, id], definedFields(record));
        this.db.put(['i', appId, endpointId, id], at);
        touched.set(`${appId} ${endpointId}`, [appId, endpointId]);
      }
      for (const [appId, endpointId] of touched.values()) {
        const older = this.db.getKeys({ start: ['d', appId, endpointId, END], end: ['d', appId, endpointId], reverse: true, offset: KEPT_DELIVERIES });
        for (const key of [...older]) {
          this.db.remove(key);
          this.db.remove(['i', appId, endpointId, key[4] as string]);
        }
      }
    });
  }

  async deliveries(appId: string, endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    const range = this.db.getRange({ start: ['d', appId, endpointId, END], end: ['d', appId, endpointId], reverse: true, limit });
    return [...range].map((e) => e.value as WebhookDelivery);
  }

  async delivery(appId: string, endpointId: string, id: string): Promise<WebhookDelivery | undefined> {
    const at = this.db.get(['i', appId, endpointId, id]) as string | undefined;
    return at === undefined ? undefined : (this.db.get(['d', appId, endpointId, at, id]) as WebhookDelivery | undefined);
  }
}
