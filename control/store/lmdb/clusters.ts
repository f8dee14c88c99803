import { randomUUID } from 'node:crypto';
import type { RootDatabase } from 'lmdb';
import { rangeValues, type Db } from './shared.ts';
import type { Cluster, ClusterStatus, ClusterStore } from '../types.ts';

export class LmdbClusters implements ClusterStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Db,
  ) {}

  upsert(name: string, endpoint: string, now: string, status?: ClusterStatus): Promise<Cluster> {
    return this.root.transaction(() => {
      const current = this.db.get(['n', name]) as Cluster | undefined;
      const cluster: Cluster = current
        ? { ...current, endpoint, status: status ?? current.status }
        : { id: randomUUID(), name, endpoint, status: status ?? 'ACTIVE', createdAt: now };
      this.db.put(['n', name], cluster);
      this.db.put(['i', cluster.id], name);
      return cluster;
    });
  }

  async get(id: string): Promise<Cluster | undefined> {
    const name = this.db.get(['i', id]) as string | undefined;
    return name === undefined ? undefined : this.getByName(name);
  }

  async getByName(name: string): Promise<Cluster | undefined> {
    return this.db.get(['n', name]) as Cluster | undefined;
  }

  async list(): Promise<Cluster[]> {
    return [...rangeValues<Cluster>(this.db, ['n'])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}
