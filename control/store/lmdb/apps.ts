import type { RootDatabase } from 'lmdb';
import { END, rangeValues, type Db } from './shared.ts';
import type { ApiKeyRecord, ApiKeyStore, Application, ApplicationStore } from '../types.ts';

export class LmdbApplications implements ApplicationStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Db,
  ) {}

  create(app: Application, limit: number): Promise<'created' | 'limit'> {
    return this.root.transaction(() => {
      let count = 0;
      for (const _ of this.db.getKeys({ start: ['c', app.clientId], end: ['c', app.clientId, END] })) count++;
      if (count >= limit) return 'limit' as const;
      this.db.put(['c', app.clientId, app.id], app);
      this.db.put(['i', app.id], app.clientId);
      return 'created' as const;
    });
  }

  async list(clientId: string): Promise<Application[]> {
    return [...rangeValues<Application>(this.db, ['c', clientId])].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async get(clientId: string, appId: string): Promise<Application | undefined> {
    return this.db.get(['c', clientId, appId]) as Application | undefined;
  }

  async getById(appId: string): Promise<Application | undefined> {
    const clientId = this.db.get(['i', appId]) as string | undefined;
    return clientId === undefined ? undefined : this.get(clientId, appId);
  }

  async listAll(clusterId?: string): Promise<Application[]> {
    return [...rangeValues<Application>(this.db, ['c'])]
      .filter((app) => clusterId === undefined || app.clusterId === clusterId)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  update(app: Application): Promise<'updated' | 'not-found'> {
    return this.root.transaction(() => {
      if (this.db.get(['c', app.clientId, app.id]) === undefined) return 'not-found' as const;
      this.db.put(['c', app.clientId, app.id], app);
      return 'updated' as const;
    });
  }

  delete(clientId: string, appId: string): Promise<'deleted' | 'not-found'> {
    return this.root.transaction(() => {
      if (this.db.get(['c', clientId, appId]) === undefined) return 'not-found' as const;
      this.db.remove(['c', clientId, appId]);
      this.db.remove(['i', appId]);
      return 'deleted' as const;
    });
  }
}

export class LmdbApiKeys implements ApiKeyStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Db,
  ) {}

  private activeCount(appId: string): number {
    let n = 0;
    for (const key of rangeValues<ApiKeyRecord>(this.db, ['k', appId])) if (!key.revokedAt) n++;
    return n;
  }

  create(key: ApiKeyRecord, limit: number): Promise<'created' | 'limit'> {
    return this.root.transaction(() => {
      if (this.activeCount(key.appId) >= limit) return 'limit' as const;
      this.db.put(['k', key.appId, key.id], key);
      return 'created' as const;
    });
  }

  async list(appId: string): Promise<ApiKeyRecord[]> {
    return [...rangeValues<ApiKeyRecord>(this.db, ['k', appId])].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async get(appId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
    return this.db.get(['k', appId, keyId]) as ApiKeyRecord | undefined;
  }

  revoke(appId: string, keyId: string, now: string): Promise<'revoked' | 'not-found'> {
    return this.root.transaction(() => {
      const key = this.db.get(['k', appId, keyId]) as ApiKeyRecord | undefined;
      if (!key) return 'not-found' as const;
      if (!key.revokedAt) this.db.put(['k', appId, keyId], { ...key, revokedAt: now });
      return 'revoked' as const;
    });
  }

  revokeAll(appId: string, now: string): Promise<number> {
    return this.root.transaction(() => {
      let n = 0;
      for (const key of [...rangeValues<ApiKeyRecord>(this.db, ['k', appId])]) {
        if (key.revokedAt) continue;
        this.db.put(['k', appId, key.id], { ...key, revokedAt: now });
        n++;
      }
      return n;
    });
  }

  rotate(appId: string, keyId: string, next: ApiKeyRecord, now: string): Promise<'rotated' | 'not-found' | 'revoked'> {
    return this.root.transaction(() => {
      const key = this.db.get(['k', appId, keyId]) as ApiKeyRecord | undefined;
      if (!key) return 'not-found' as const;
      if (key.revokedAt) return 'revoked' as const;
      this.db.put(['k', appId, keyId], { ...key, revokedAt: now });
      this.db.put(['k', appId, next.id], next);
      return 'rotated' as const;
    });
  }

  async isActive(appId: string, keyId: string): Promise<boolean> {
    const key = this.db.get(['k', appId, keyId]) as ApiKeyRecord | undefined;
    return key !== undefined && !key.revokedAt;
  }
}
