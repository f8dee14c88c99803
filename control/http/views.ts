import type { ApiKeyRecord, Application, Cluster } from '../store/index.ts';

/** Create form of an application (spec §2.2): no type, no cluster details. */
export const createdView = (app: Application) => ({
  id: app.id,
  clientId: app.clientId,
  name: app.name,
  status: app.status,
  tier: app.tier,
  clusterId: app.clusterId,
  createdAt: app.createdAt,
  updatedAt: app.updatedAt,
});

export const detailView = (app: Application, cluster: Cluster) => ({
  ...createdView(app),
  type: app.type,
  clusterEndpoint: cluster.endpoint,
  clusterName: cluster.name,
  clusterStatus: cluster.status,
});

export const keySummaryView = (key: ApiKeyRecord, lastUsedAt: string | undefined) => ({
  id: key.id,
  keyPrefix: key.keyPrefix,
  ...(key.keySuffix !== undefined ? { keySuffix: key.keySuffix } : {}),
  audience: key.audience,
  tier: key.tier,
  status: key.revokedAt ? ('REVOKED' as const) : ('ACTIVE' as const),
  createdAt: key.createdAt,
  ...(key.revokedAt ? { revokedAt: key.revokedAt } : {}),
  lastUsedAt: lastUsedAt ?? null,
});
