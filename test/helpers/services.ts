import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import type { CassandraClient } from '../../common/cassandra/index.ts';

/**
 * The Cassandra client and the node store's migrations, loaded when a suite asks for a keyspace:
 * every test file imports this module (through helpers/index.ts), and loading them through tsx
 * costs about 2.5 s of CPU, for the many files that never touch Cassandra themselves.
 */
const cassandraModule = () => import('../../common/cassandra/index.ts');

/** A real service a suite needs, and where it listens (from the same variables the service reads). */
export interface ServiceAddress {
  host: string;
  port: number;
}

const addresses = {
  cassandra: (): ServiceAddress => {
    const [host = '127.0.0.1', port = '9042'] = (process.env.CASSANDRA_CONTACT_POINTS ?? '127.0.0.1:9042').split(',')[0]!.split(':');
    return { host, port: Number(port) };
  },
  clamav: (): ServiceAddress => {
    const [host = '127.0.0.1', port = '3310'] = (process.env.CLAMAV_ADDRESS || '127.0.0.1:3310').split(':');
    return { host, port: Number(port) };
  },
  objectstore: (): ServiceAddress => {
    const url = new URL(process.env.S3_ENDPOINT ?? 'http://127.0.0.1:7070');
    return { host: url.hostname, port: Number(url.port || 80) };
  },
  redis: (): ServiceAddress => {
    const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    return { host: url.hostname, port: Number(url.port || 6379) };
  },
};

export type ServiceName = keyof typeof addresses;

function reachable({ host, port }: ServiceAddress, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Where the real service listens, or undefined when it does not. Outside CI the suite then records
 * a skip (`t.skip(reason)`, or `t.plan(0, reason)` before any test), after the loud line this
 * logs saying how to start the service; with CI=true a missing service is an error, so a suite can
 * never pass by not running.
 */
export async function requireService(name: ServiceName, log: (line: string) => void): Promise<ServiceAddress | undefined> {
  const address = addresses[name]();
  if (await reachable(address)) return address;
  const how = `start it with: scripts/services.sh start ${name}`;
  if (process.env.CI === 'true') throw new Error(`${name} is not reachable at ${address.host}:${address.port} and CI=true: ${how}`);
  log(`SKIPPED: ${name} is not reachable at ${address.host}:${address.port}; ${how}`);
  return undefined;
}

/**
 * A Cassandra client and a keyspace of this test file's own (RF 1), dropped when the file ends.
 * DDL is slow, so files create one keyspace and let their subtests share it with fresh ids.
 */
export async function testKeyspace(
  t: { teardown(fn: () => unknown): void },
  address: ServiceAddress,
  prefix: string,
): Promise<{ client: CassandraClient; keyspace: string }> {
  const { connectCassandra, DDL_OPTIONS, ensureKeyspace } = await cassandraModule();
  const client = connectCassandra({ contactPoints: `${address.host}:${address.port}`, localDataCenter: 'datacenter1' });
  const keyspace = `${prefix}_${randomBytes(6).toString('hex')}`;
  t.teardown(async () => {
    await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`, [], DDL_OPTIONS);
    await client.shutdown();
  });
  await ensureKeyspace(client, keyspace, 1);
  return { client, keyspace };
}

/** The replicated topology `scripts/services.sh start --topology ha` runs. */
export interface HaTopology {
  /** The Cassandra nodes as contact points, `host:port,…` (what CASSANDRA_CONTACT_POINTS takes). */
  cassandra: string;
  /** The Redis Cluster's nodes, `host:port,…` (what REDIS_CLUSTER_NODES takes). */
  redisClusterNodes: string;
  /** Each Cassandra node's address (its own loopback address), in order. */
  cassandraAddresses: string[];
  /** Each Redis node's address, in order. */
  redisAddresses: string[];
}

/** scripts/services.sh's default HA addresses (HA_CASSANDRA_ADDRESSES, HA_REDIS_ADDRESSES there). */
const HA_DEFAULTS = {
  cassandra: '127.0.0.11:9042,127.0.0.12:9042,127.0.0.13:9042',
  redis: '127.0.0.21:6379,127.0.0.22:6379,127.0.0.23:6379,127.0.0.24:6379,127.0.0.25:6379,127.0.0.26:6379',
};

function serviceList(list: string, defaultPort: number): ServiceAddress[] {
  return list
    .split(',')
    .map((point) => point.trim())
    .filter(Boolean)
    .map((point) => {
      const [host = '', port] = point.split(':');
      return { host, port: port === undefined ? defaultPort : Number(port) };
    });
}

/**
 * The HA topology, from HA_CASSANDRA_CONTACT_POINTS and HA_REDIS_CLUSTER_NODES (`host:port`,
 * comma-separated; by default scripts/services.sh's addresses), when every one of its nodes accepts
 * connections; otherwise undefined, with a loud line saying how to start it (the suite then records
 * a skip), or with CI=true an error, as requireService.
 */
export async function requireHaTopology(log: (line: string) => void): Promise<HaTopology | undefined> {
  const cassandra = process.env.HA_CASSANDRA_CONTACT_POINTS || HA_DEFAULTS.cassandra;
  const redisClusterNodes = process.env.HA_REDIS_CLUSTER_NODES || HA_DEFAULTS.redis;
  const cassandraNodes = serviceList(cassandra, 9042);
  const redisNodes = serviceList(redisClusterNodes, 6379);
  const answers = await Promise.all([...cassandraNodes, ...redisNodes].map(async (node) => ({ node, up: await reachable(node) })));
  const down = answers.filter((a) => !a.up).map(({ node }) => `${node.host}:${node.port}`);
  if (down.length === 0 && cassandraNodes.length > 0 && redisNodes.length > 0) {
    return { cassandra, redisClusterNodes, cassandraAddresses: cassandraNodes.map((n) => n.host), redisAddresses: redisNodes.map((n) => n.host) };
  }
  const what = down.length > 0 ? `${down.join(', ')} not reachable` : 'no nodes named';
  const how = 'start it with: scripts/services.sh start --topology ha (or set HA_CASSANDRA_CONTACT_POINTS, HA_REDIS_CLUSTER_NODES)';
  if (process.env.CI === 'true') throw new Error(`the HA topology is not running (${what}) and CI=true: ${how}`);
  log(`SKIPPED: the HA topology is not running (${what}); ${how}`);
  return undefined;
}

/**
 * A Cassandra client on the HA ring and a keyspace of this test file's own at replication factor 3,
 * dropped when the file ends. DDL waits for the three nodes to agree on the schema, so creating
 * tables there is slower still than on one node: files create one keyspace and share it.
 */
export async function haTestKeyspace(
  t: { teardown(fn: () => unknown): void },
  contactPoints: string,
  prefix: string,
): Promise<{ client: CassandraClient; keyspace: string }> {
  const { connectCassandra, DDL_OPTIONS, ensureKeyspace } = await cassandraModule();
  const client = connectCassandra({ contactPoints, localDataCenter: 'datacenter1' });
  const keyspace = `${prefix}_${randomBytes(6).toString('hex')}`;
  t.teardown(async () => {
    // A suite that leaves a node down still closes its client.
    try {
      await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`, [], DDL_OPTIONS);
    } finally {
      await client.shutdown();
    }
  });
  await ensureKeyspace(client, keyspace, 3);
  return { client, keyspace };
}

/** The keyspace the suites of the HA topology share on its ring (haSharedNodeKeyspace). */
export const HA_SHARED_KEYSPACE = 'chat_ha_tests';

/**
 * One keyspace at replication factor 3 with the node store's schema, shared by the suites of the
 * HA topology and kept between runs (`chat_ha_tests`): building the schema there takes minutes
 * (every DDL waits for the three nodes to agree), while checking it is one read. Suites use fresh
 * application and chat ids in it, as every store suite does.
 */
export async function haSharedNodeKeyspace(client: CassandraClient): Promise<string> {
  const keyspace = HA_SHARED_KEYSPACE;
  const [{ ensureKeyspace, migrate }, { nodeMigrations }] = await Promise.all([cassandraModule(), import('../../node/store/index.ts')]);
  await ensureKeyspace(client, keyspace, 3);
  await migrate(client, keyspace, nodeMigrations);
  return keyspace;
}
