import { randomBytes } from 'node:crypto';
import { connectCassandra } from '../common/cassandra/index.ts';
import { ownerOf } from '../node/bus/index.ts';
import { freePort, startService, type Running } from './spawn.ts';

export interface ClusterNode {
  url: string;
  port: number;
  nodeId: string;
  process: Running;
  /** The address it listens on (public port and node-to-node listener): 127.0.0.1 unless given one of its own. */
  address: string;
  /** Its process id (process.pid): a restarted node is a new ClusterNode with a new one. */
  pid: number;
}

/**
 * Loopback addresses of their own for the control service and for each node (as many as the
 * cluster's size), so that a fault-injection test can tell their traffic apart by address.
 */
export interface ClusterAddresses {
  control: string;
  nodes: string[];
}

export interface SpawnedCluster {
  control: Running;
  nodes: ClusterNode[];
  env: Record<string, string>;
  /** Starts (or restarts, on the same port) the i-th node. */
  startNode(i: number): Promise<ClusterNode>;
  /** Resolves when every running node sees exactly the running nodes as live. */
  settled(timeoutMs?: number): Promise<void>;
  /** The node that owns a chat, by the same placement the nodes compute. */
  ownerOf(appId: string, chatId: string): ClusterNode;
  stop(): Promise<void>;
}

/** The live node ids a node last logged (`cluster membership changed`). */
function lastView(node: ClusterNode): string[] | undefined {
  let view: string[] | undefined;
  for (const line of node.process.output().split('\n')) {
    if (!line.includes('cluster membership changed')) continue;
    try {
      view = (JSON.parse(line) as { nodes: string[] }).nodes;
    } catch {
      /* not a log line */
    }
  }
  return view;
}

function nodeIdOf(process: Running): string {
  const line = process.output().split('\n').find((l) => l.includes('"event":"listening"') && l.includes('"nodeId"'));
  if (!line) throw new Error(`node logged no id:\n${process.output()}`);
  return (JSON.parse(line) as { nodeId: string }).nodeId;
}

/**
 * Control service plus `size` nodes as separate processes (used by the tests and the benchmarks) on one fresh Cassandra keyspace (or
 * the one `env` names) and one Redis, under a cluster name of their own (so concurrent suites never see each other's nodes).
 * With `addresses` each node listens on its own address (HOST) and announces its public URL and
 * its node-to-node listener there, and the control service listens on its own; otherwise all
 * listen on 127.0.0.1.
 */
export async function startCluster(options: {
  size: number;
  cassandra: string;
  redisUrl: string;
  env?: Record<string, string>;
  nodeArgs?: string[];
  addresses?: ClusterAddresses;
  /**
   * Keep the keyspace at stop: the caller names one in `env` (CASSANDRA_KEYSPACE) that it reuses
   * across runs, where building it again would cost minutes (a replicated ring's DDL).
   */
  keepKeyspace?: boolean;
}): Promise<SpawnedCluster> {
  const { addresses } = options;
  if (addresses && addresses.nodes.length < options.size) throw new Error(`startCluster: ${options.size} nodes but ${addresses.nodes.length} node addresses`);
  const nodeAddress = (i: number) => addresses?.nodes[i] ?? '127.0.0.1';
  const suffix = randomBytes(5).toString('hex');
  const env: Record<string, string> = {
    STORE: 'cassandra',
    BUS: 'redis',
    CASSANDRA_CONTACT_POINTS: options.cassandra,
    CASSANDRA_KEYSPACE: `chat_cl_${suffix}`,
    REDIS_URL: options.redisUrl,
    CLUSTER_NAME: `it-${suffix}`,
    USER_SENDS_PER_SECOND: '100000',
    APP_ACTIONS_PER_SECOND: '100000',
    USER_REQUESTS_PER_SECOND: '100000',
    WS_ACTIONS_PER_SECOND: '100000',
    ...options.env,
  };
  const ports = await Promise.all(Array.from({ length: options.size }, (_, i) => freePort(nodeAddress(i))));
  const nodes: ClusterNode[] = [];
  const startNode = async (i: number): Promise<ClusterNode> => {
    const port = ports[i]!;
    const address = nodeAddress(i);
    const url = `http://${address}:${port}`;
    // Each node's node-to-node listener takes a free port of its own (whatever the caller's
    // environment says) on HOST; an empty NODE_RPC_ADDRESS announces it as HOST:<that port>.
    const host: Record<string, string> = addresses ? { HOST: address } : {};
    const process = await startService({ ...env, ...host, ROLE: 'node', NODE_PORT: String(port), NODE_PUBLIC_URL: url, NODE_RPC_PORT: '0', NODE_RPC_ADDRESS: '' }, undefined, { services: ['node'], nodeArgs: options.nodeArgs });
    const node = { url, port, nodeId: nodeIdOf(process), process, address, pid: process.pid };
    nodes[i] = node;
    return node;
  };
  // The first node creates the keyspace; the others then start together.
  await startNode(0);
  await Promise.all(ports.slice(1).map((_, i) => startNode(i + 1)));
  const control = await startService({ ...env, ...(addresses ? { HOST: addresses.control } : {}), ROLE: 'control', NODE_PUBLIC_URL: nodes[0]!.url }, undefined, { services: ['control'] });
  const running = () => nodes.filter((n) => n.process.alive());
  const cluster: SpawnedCluster = {
    control,
    nodes,
    env,
    startNode,
    settled: async (timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const want = running().map((n) => n.nodeId).sort().join(',');
        if (running().every((n) => lastView(n)?.slice().sort().join(',') === want)) return;
        if (Date.now() > deadline) throw new Error(`cluster did not settle on ${want}: ${running().map((n) => `${n.nodeId}: ${lastView(n)?.join(',')}`).join('; ')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    ownerOf: (appId, chatId) => {
      const id = ownerOf(`${appId}/${chatId}`, running().map((n) => n.nodeId));
      return nodes.find((n) => n.nodeId === id)!;
    },
    stop: async () => {
      await Promise.all([control.stop(), ...nodes.map((n) => n.process.stop())]);
      if (options.keepKeyspace) return;
      const admin = connectCassandra({ contactPoints: options.cassandra, localDataCenter: 'datacenter1' });
      await admin.execute(`DROP KEYSPACE IF EXISTS ${env.CASSANDRA_KEYSPACE}`).catch(() => undefined);
      await admin.shutdown();
    },
  };
  await cluster.settled();
  return cluster;
}
