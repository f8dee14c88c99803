import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RedisOptions } from 'ioredis';
import type { Config, Logger } from '../common/index.ts';
import { HeartbeatMembership, HeartbeatPresence, parseRedisNodes, RedisBus, RedisLeases, type Bus, type RedisNodeAddress } from '../node/bus/index.ts';
import type { NodeCluster } from '../node/index.ts';

/** How long a chat operation keeps retrying while its owner is unreachable: past one membership TTL (3 s) plus a poll. */
const FAILOVER_MS = 10_000;

export interface ClusterHandles {
  cluster: NodeCluster;
  close(): Promise<void>;
}

/**
 * Connection options beyond REDIS_URL: a private CA for TLS (rediss://). The file is read at start,
 * so a wrong path stops the service with its name rather than failing every connection later.
 */
export function redisOptions(config: Readonly<Config>): RedisOptions {
  if (!config.REDIS_TLS_CA_FILE) return {};
  if (!config.REDIS_URL.startsWith('rediss://')) throw new Error('REDIS_TLS_CA_FILE is set but REDIS_URL is not rediss:// (TLS)');
  return { tls: { ca: readFileSync(config.REDIS_TLS_CA_FILE, 'utf8') } };
}

/**
 * Where the bus and the leases connect: the Redis at REDIS_URL, or with REDIS_CLUSTER_NODES set
 * the Redis Cluster those nodes belong to (REDIS_URL then gives only its password and TLS).
 */
export function redisTarget(config: Readonly<Config>): { url: string; redis: RedisOptions; cluster?: RedisNodeAddress[] } {
  const redis = redisOptions(config);
  if (!config.REDIS_CLUSTER_NODES) return { url: config.REDIS_URL, redis };
  const cluster = parseRedisNodes(config.REDIS_CLUSTER_NODES);
  if (cluster instanceof Error) throw new Error(`REDIS_CLUSTER_NODES: ${cluster.message}`);
  return { url: config.REDIS_URL, redis, cluster };
}

/**
 * What a node needs to be one of many (BUS=redis): the bus, and the node list and user presence
 * over Redis leases. A cluster keeps its state in Cassandra/ScyllaDB: nodes on separate embedded
 * stores would each number the same chat, so that combination is refused.
 */
export async function joinCluster(config: Readonly<Config>, log: Logger): Promise<ClusterHandles> {
  if (config.STORE !== 'cassandra') throw new Error('BUS=redis runs several nodes, which must share one store: set STORE=cassandra');
  const nodeId = randomUUID();
  const busLog = log.child({ component: 'bus' });
  const target = redisTarget(config);
  const bus = await RedisBus.connect({ ...target, nodeId, prefix: `${config.CLUSTER_NAME}:`, log: busLog });
  const leases = await RedisLeases.connect({ ...target, prefix: `${config.CLUSTER_NAME}:`, log: busLog }).catch(async (error: unknown) => {
    await bus.close();
    throw error;
  });
  const membership = new HeartbeatMembership(leases, { log: busLog });
  const presence = new HeartbeatPresence(leases, { log: busLog });
  return {
    cluster: { nodeId, bus, membership, presence, failoverMs: FAILOVER_MS },
    close: async () => {
      await Promise.allSettled([membership.close(), presence.close()]);
      await Promise.allSettled([bus.close(), leases.close()]);
    },
  };
}

/** The control service's line to the nodes: it announces API-key revocations on the bus. */
export async function controlBus(config: Readonly<Config>, log: Logger): Promise<Bus> {
  return RedisBus.connect({ ...redisTarget(config), nodeId: `control-${randomUUID()}`, prefix: `${config.CLUSTER_NAME}:`, log: log.child({ component: 'bus' }) });
}
