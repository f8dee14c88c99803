import { client, newAccount } from './http.ts';
import { requireService } from './services.ts';
import type { SpawnedCluster } from '../../bin/spawn-cluster.ts';

export { startCluster, type ClusterNode, type SpawnedCluster as TestCluster } from '../../bin/spawn-cluster.ts';
type TestCluster = SpawnedCluster;

export interface AppUser {
  userId: string;
  jwt: string;
}

/** An account, an application with a key, and `usernames` signed in as chat users. */
export async function clusterApp(cluster: TestCluster, usernames: string[]): Promise<{ appId: string; key: { id: string; token: string }; mgmtToken: string; users: AppUser[] }> {
  const mgmt = client(cluster.control.controlUrl);
  const mgmtToken = (await mgmt.post('/api/auth/register', newAccount('cl'))).body.accessToken as string;
  const app = (await mgmt.post('/api/client/apps', { name: 'Cluster' }, mgmtToken)).body;
  const key = (await mgmt.post(`/api/client/apps/${app.id}/keys`, undefined, mgmtToken)).body;
  const api = client(cluster.nodes[0]!.url);
  const users: AppUser[] = [];
  for (const username of usernames) {
    const created = await api.post('/api/users', { username }, key.token);
    const signedIn = (await api.post('/api/users/signin', { userId: created.body.userId }, key.token)).body;
    users.push({ userId: created.body.userId, jwt: signedIn.jwt });
  }
  return { appId: app.id, key: { id: key.id, token: key.token }, mgmtToken, users };
}

/**
 * Where a cluster test's nodes find Cassandra and Redis (see requireService): undefined, with the
 * skip reported, when either is not running outside CI; with CI=true a missing one throws.
 */
export async function clusterBackends(t: { comment(line: string): void; skip(name: string, cb: () => void): unknown }): Promise<{ cassandra: string; redisUrl: string } | undefined> {
  const cassandra = await requireService('cassandra', (line) => t.comment(line));
  const redis = await requireService('redis', (line) => t.comment(line));
  if (!cassandra || !redis) {
    t.skip('cassandra or redis not running', () => undefined);
    return undefined;
  }
  return { cassandra: `${cassandra.host}:${cassandra.port}`, redisUrl: `redis://${redis.host}:${redis.port}` };
}
