import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

/** One node of a Redis Cluster, as given to connect: any reachable node will do, the others are discovered. */
export interface RedisNodeAddress {
  host: string;
  port: number;
}

/**
 * The nodes in a `host:port,host:port` list (REDIS_CLUSTER_NODES), or an Error naming the first
 * entry that is not one. An IPv6 host is written in brackets: `[::1]:6379`.
 */
export function parseRedisNodes(list: string): RedisNodeAddress[] | Error {
  const nodes: RedisNodeAddress[] = [];
  for (const entry of list.split(',').map((e) => e.trim())) {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):([0-9]{1,5})$/.exec(entry);
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65535) return new Error(`not a host:port: ${JSON.stringify(entry)}`);
    nodes.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return nodes;
}

/**
 * The options of every connection to a node of a Redis Cluster: the user name, password and TLS
 * (rediss://) of `url`, as a single Redis takes them from it, over `extra` (a private CA). The
 * URL's host, port and database are not used: a cluster has database 0 only.
 */
export function clusterNodeOptions(url: string, extra: RedisOptions = {}): NonNullable<ClusterOptions['redisOptions']> {
  const parsed = new URL(url);
  const options: RedisOptions = { ...extra };
  if (parsed.username) options.username = decodeURIComponent(parsed.username);
  if (parsed.password) options.password = decodeURIComponent(parsed.password);
  if (parsed.protocol === 'rediss:') options.tls = extra.tls ?? {};
  return options;
}

/**
 * Connects each node connection of a ready `cluster` as soon as the cluster learns of the node
 * (a replica promoted), rather than on its first command, which would wait in that connection's
 * own queue. With the cluster's offline queue off, ioredis refuses a command for a node still
 * connecting, so a node is usable a moment after it appears. Not while the cluster connects: its
 * ready check goes to any node and must not meet one connecting (at start the caller connects
 * them all with readyNodes).
 */
export function connectNodesAhead(cluster: Cluster): void {
  cluster.on('+node', (node: Redis) => {
    if (cluster.status === 'ready' && node.status === 'wait') node.connect().catch(() => undefined);
  });
}

/**
 * Resolves once the connection to every master in `cluster`'s slot map answers PING (connecting
 * those not yet connected); rejects if one cannot be reached, or if the map names a master the
 * client has no connection to (it died and no replica has taken over yet).
 */
export async function readyNodes(cluster: Cluster): Promise<void> {
  const byKey = new Map(cluster.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]));
  const masters = new Set(cluster.slots.map((owners) => owners?.[0]));
  await Promise.all(
    [...masters].map((key) => {
      const node = key === undefined ? undefined : byKey.get(key);
      return node ? node.ping() : Promise.reject(new Error(`no connection to the master ${key ?? 'of some slots'}`));
    }),
  );
}

/**
 * Disconnects a client that failed to connect, and stops it trying again (a Cluster would retry
 * its start for ever). A TLS socket whose handshake the other side broke off can still raise an
 * error after ioredis has let go of it: with no listener, that error would end the process rather
 * than the failed start reporting its reason.
 */
export function quietDisconnect(client: Redis | Cluster): void {
  if (client instanceof Redis) (client.stream as { on?: (event: string, listener: () => void) => void } | undefined)?.on?.('error', () => undefined);
  client.disconnect();
}

/**
 * Rejects if the one Redis `redis` is connected to is a node of a Redis Cluster. Such a node serves
 * only its own slots: every lease script whose key hashes elsewhere is answered MOVED (the node
 * list lives in one slot, presence in all of them), so nodes would not see each other and every
 * new socket would be closed. Refused at start with what to set instead. A Redis that will not
 * answer INFO (an ACL without it) is taken as it is.
 */
export async function refuseClusterNode(redis: Redis, url: string): Promise<void> {
  const info = await redis.info('cluster').catch(() => '');
  if (!/cluster_enabled:1/.test(info)) return;
  const shown = new URL(url);
  if (shown.password) shown.password = '***';
  throw new Error(`REDIS_URL ${shown.toString()} is a node of a Redis Cluster, which serves only its own slots: list the cluster's nodes in REDIS_CLUSTER_NODES (REDIS_URL then gives only the password and TLS)`);
}

/**
 * The error worth reporting from a failed Cluster start: ioredis says "Failed to refresh slots
 * cache" and keeps the node's own error (refused, TLS, auth, not a cluster) as `lastNodeError`.
 */
export function clusterStartError(error: unknown): unknown {
  return (error as { lastNodeError?: unknown } | undefined)?.lastNodeError ?? error;
}

/** `promise`, or a rejection once `ms` have passed without it settling. */
export function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from Redis within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
