import type { ClusterStatus, ControlStore } from '../store/index.ts';
import { EXIT, jsonLines, table, type ExitCode, type Io } from './output.ts';

/** `cluster register`: creates the cluster, or changes the endpoint (and the status, when given) of a registered one. */
export async function registerCluster(store: ControlStore, io: Io, name: string, endpoint: string, status: ClusterStatus | undefined, now: string): Promise<ExitCode> {
  const before = await store.clusters.getByName(name);
  const cluster = await store.clusters.upsert(name, endpoint, now, status);
  io.out(`cluster ${cluster.name} ${before ? 'updated' : 'registered'}: id ${cluster.id}, endpoint ${cluster.endpoint}, status ${cluster.status}\n`);
  return EXIT.done;
}

/** `cluster list`: every cluster by name, with the number of applications bound to it. */
export async function listClusters(store: ControlStore, io: Io, json: boolean): Promise<ExitCode> {
  const [clusters, apps] = await Promise.all([store.clusters.list(), store.applications.listAll()]);
  const counts = new Map<string, number>();
  for (const app of apps) counts.set(app.clusterId, (counts.get(app.clusterId) ?? 0) + 1);
  const rows = clusters.map((c) => ({ name: c.name, id: c.id, endpoint: c.endpoint, status: c.status, applications: counts.get(c.id) ?? 0 }));
  io.out(
    json
      ? jsonLines(rows)
      : table(
          ['NAME', 'ID', 'ENDPOINT', 'STATUS', 'APPS'],
          rows.map((r) => [r.name, r.id, r.endpoint, r.status, String(r.applications)]),
        ),
  );
  return EXIT.done;
}
