import type { Database, RootDatabase } from 'lmdb';
import type { WebhookEndpoint, WebhookStore } from './webhook-types.ts';

type Key = (string | number)[];
const END = '\uffff';

/** The embedded webhook endpoints: ['w', app, id]. The count check and the create are one write transaction. */
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
      return 'deleted' as const;
    });
  }
}
