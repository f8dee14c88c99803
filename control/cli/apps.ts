import type { Application, AppStatus, Cluster, ControlStore, Tier } from '../store/index.ts';
import { EXIT, jsonLines, table, type ExitCode, type Io } from './output.ts';

const notFound = (io: Io, appId: string): ExitCode => {
  io.err(`application ${appId} not found\n`);
  return EXIT.refused;
};

/** `app show`: the stored application as JSON. */
export async function showApp(store: ControlStore, io: Io, appId: string): Promise<ExitCode> {
  const app = await store.applications.getById(appId);
  if (!app) return notFound(io, appId);
  io.out(`${JSON.stringify(app, null, 2)}\n`);
  return EXIT.done;
}

/** `app suspend` / `app reactivate`. */
export async function setAppStatus(store: ControlStore, io: Io, appId: string, status: AppStatus, now: string): Promise<ExitCode> {
  const app = await store.applications.getById(appId);
  if (!app || (await store.applications.update({ ...app, status, updatedAt: now })) === 'not-found') return notFound(io, appId);
  io.out(`application ${appId} is now ${status}\n`);
  return EXIT.done;
}

/** `app list`: every application of every account (or of one cluster), oldest first. */
export async function listApps(store: ControlStore, io: Io, clusterName: string | undefined, json: boolean): Promise<ExitCode> {
  const clusters = await store.clusters.list();
  let only: Cluster | undefined;
  if (clusterName !== undefined) {
    only = clusters.find((c) => c.name === clusterName);
    if (!only) {
      io.err(`cluster ${clusterName} not found (see cluster list)\n`);
      return EXIT.refused;
    }
  }
  const names = new Map(clusters.map((c) => [c.id, c.name]));
  const apps = (await store.applications.listAll(only?.id)).map((app) => ({ ...app, clusterName: names.get(app.clusterId) ?? null }));
  io.out(
    json
      ? jsonLines(apps)
      : table(
          ['ID', 'ACCOUNT', 'STATUS', 'TIER', 'CLUSTER', 'NAME'],
          apps.map((a) => [a.id, a.clientId, a.status, a.tier, a.clusterName ?? `(unregistered ${a.clusterId})`, a.name]),
        ),
  );
  return EXIT.done;
}

/**
 * `app move` (and `app tier`): sets the tier (and type) and binds the application to another
 * cluster, which must be ACTIVE unless it is the application's own. API keys carry the name of the
 * cluster they were made for (`aud`), so the active keys made for another cluster than the
 * application's are listed: its cluster's nodes refuse them, and each must be rotated.
 */
export async function moveApp(store: ControlStore, io: Io, appId: string, tier: Tier | undefined, clusterName: string | undefined, now: string): Promise<ExitCode> {
  const app = await store.applications.getById(appId);
  if (!app) return notFound(io, appId);
  let cluster = await store.clusters.get(app.clusterId);
  if (clusterName !== undefined) {
    const target = await store.clusters.getByName(clusterName);
    if (!target) {
      io.err(`cluster ${clusterName} not found; register it first: cluster register ${clusterName} <endpoint>\n`);
      return EXIT.refused;
    }
    if (target.id !== app.clusterId && target.status !== 'ACTIVE') {
      io.err(`cluster ${clusterName} is ${target.status}: no application may be moved onto it\n`);
      return EXIT.refused;
    }
    cluster = target;
  }
  const moved: Application = { ...app, ...(tier ? { tier, type: tier } : {}), clusterId: cluster?.id ?? app.clusterId, updatedAt: now };
  if ((await store.applications.update(moved)) === 'not-found') return notFound(io, appId);
  io.out(`application ${appId} is now ${moved.tier} on cluster ${cluster ? `${cluster.name} (${cluster.endpoint})` : `${moved.clusterId} (unregistered)`}\n`);
  if (!cluster) return EXIT.done;
  const stale = (await store.keys.list(appId)).filter((k) => !k.revokedAt && k.audience !== cluster.name);
  if (stale.length > 0) {
    io.out(
      `${stale.length} active API key(s) were made for another cluster and are refused by the nodes of ${cluster.name}; ` +
        `rotate each (POST /api/client/apps/${appId}/keys/<keyId>/rotate) and hand the new token to the integrator:\n`,
    );
    io.out(table(['KEY', 'PREFIX', 'AUDIENCE'], stale.map((k) => [k.id, k.keyPrefix, k.audience])));
  }
  return EXIT.done;
}
