import { execFile, execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import cassandra from 'cassandra-driver';
import { Redis } from 'ioredis';
import { connectCassandra } from '../../../common/cassandra/index.ts';
import { errorCodes } from '../../../common/errors/codes.ts';
import { ConfigSchema } from '../../../common/config/schema.ts';
import { startCluster, type SpawnedCluster } from '../../../bin/spawn-cluster.ts';
import { clusterApp, type AppUser } from '../cluster.ts';
import { HA_SHARED_KEYSPACE, requireHaTopology, requireService } from '../services.ts';
import { faultsMissing, openFaults, type Faults } from '../faults.ts';
import { now, rest, type NemesisUser } from './clients.ts';
import type { ChatEvidence, StoredMessage } from './checker.ts';

/**
 * The nemesis harness: finds the services (the HA topology when it runs, else the single one),
 * starts the cluster (control service and three chat nodes, each on a loopback address of its
 * own), enlists its processes for fault injection, and reads back what the store holds.
 */

const ROOT = new URL('../../../', import.meta.url).pathname;
const run = promisify(execFile);

export interface Topology {
  kind: 'ha' | 'single';
  /** CASSANDRA_CONTACT_POINTS for the nodes (host:port, comma-separated). */
  cassandra: string;
  cassandraAddresses: string[];
  /** REDIS_URL (single), and the Redis Cluster nodes (ha: host:port). */
  redisUrl: string;
  redisClusterNodes: string[];
  redisAddresses: string[];
  /** Environment the chat nodes need for this topology. */
  nodeEnv: Record<string, string>;
}

const splitList = (text: string | undefined) => (text ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const hostOf = (hostPort: string) => hostPort.split(':')[0]!;

/** Which pieces of the HA work this tree has. */
export function capabilities(): Record<string, boolean> {
  return {
    redisClusterBus: 'REDIS_CLUSTER_NODES' in ConfigSchema.properties,
    faultInjection: faultsMissing() === undefined,
    clusterAddresses: startCluster.toString().includes('addresses'),
    outcomeUnknown: 'OUTCOME_UNKNOWN' in errorCodes,
  };
}

/**
 * The HA topology (requireHaTopology: HA_CASSANDRA_CONTACT_POINTS and HA_REDIS_CLUSTER_NODES, by
 * default scripts/services.sh's addresses, every node reachable). Under CI=true it must run (unless
 * NEMESIS_TOPOLOGY=single); outside CI the run falls back to the single topology
 * (CASSANDRA_CONTACT_POINTS, REDIS_URL) without the phases that need the HA one, and is undefined
 * (the reason logged) when neither runs.
 */
export async function findTopology(log: (line: string) => void): Promise<Topology | undefined> {
  const single = process.env.NEMESIS_TOPOLOGY === 'single';
  const ha = single ? undefined : await requireHaTopology((line) => log(`${line}; the phases that need no HA run on the single topology`));
  if (ha) {
    const redis = splitList(ha.redisClusterNodes);
    return {
      kind: 'ha',
      cassandra: ha.cassandra,
      cassandraAddresses: ha.cassandraAddresses,
      redisUrl: `redis://${redis[0]}`,
      redisClusterNodes: redis,
      redisAddresses: ha.redisAddresses,
      // The ring's kept keyspace (haSharedNodeKeyspace): a fresh one would cost minutes of DDL.
      nodeEnv: { REDIS_CLUSTER_NODES: redis.join(','), CASSANDRA_REPLICATION_FACTOR: String(Math.min(3, ha.cassandraAddresses.length)), CASSANDRA_KEYSPACE: HA_SHARED_KEYSPACE },
    };
  }
  const c = await requireService('cassandra', log);
  const r = await requireService('redis', log);
  if (!c || !r) return undefined;
  return {
    kind: 'single',
    cassandra: `${c.host}:${c.port}`,
    cassandraAddresses: [c.host],
    redisUrl: `redis://${r.host}:${r.port}`,
    redisClusterNodes: [],
    redisAddresses: [r.host],
    nodeEnv: {},
  };
}

/** Addresses of the control service and the chat nodes (the tree's startCluster takes them). */
export const CLUSTER_ADDRESSES = { control: '127.0.0.30', nodes: ['127.0.0.31', '127.0.0.32', '127.0.0.33'] };

export interface Harness {
  topology: Topology;
  cluster: SpawnedCluster;
  faults: Faults | undefined;
  appId: string;
  apiKey: string;
  users: NemesisUser[];
  /** The enlisted name of node i's current process (enlisting it first when it was restarted). */
  enlistNode(i: number): Promise<string>;
  /** Signs every user in again (a JWT lives 15 minutes: a long run refreshes them each phase). */
  refreshUsers(): Promise<void>;
  /** Live node URLs, starting from node `home` (what a load balancer would try, in order). */
  nodesFrom(home: number): () => string[];
  log(line: string): void;
  close(): Promise<void>;
}

export async function startHarness(options: { topology: Topology; t: { teardown(fn: () => unknown): void; comment?(line: string): void }; users: number; log: (line: string) => void }): Promise<Harness> {
  const { topology, log } = options;
  const faults = faultsMissing() === undefined ? await openFaults(options.t) : undefined;
  const cluster = await startCluster({
    size: 3,
    cassandra: topology.cassandra,
    redisUrl: topology.redisUrl,
    addresses: CLUSTER_ADDRESSES,
    env: topology.nodeEnv,
    keepKeyspace: topology.kind === 'ha',
  });
  const names = Array.from({ length: options.users }, (_, i) => `n${i}`);
  const app = await clusterApp(cluster, names);
  const users: NemesisUser[] = app.users.map((u: AppUser, i) => ({ name: names[i]!, userId: u.userId, jwt: u.jwt }));
  const enlisted = new Map<number, { pid: number; name: string }>();
  let restarts = 0;
  if (faults) await faults.enlist('control', cluster.control.pid, CLUSTER_ADDRESSES.control);
  const harness: Harness = {
    topology,
    cluster,
    faults,
    appId: app.appId,
    apiKey: app.key.token,
    users,
    enlistNode: async (i) => {
      if (!faults) throw new Error('fault injection is not available');
      const node = cluster.nodes[i]!;
      const known = enlisted.get(i);
      if (known && known.pid === node.process.pid) return known.name;
      const name = known ? `node${i}-r${++restarts}` : `node${i}`;
      await faults.enlist(name, node.process.pid, CLUSTER_ADDRESSES.nodes[i]);
      enlisted.set(i, { pid: node.process.pid, name });
      return name;
    },
    refreshUsers: async () => {
      for (const u of users) {
        for (let attempt = 0; ; attempt++) {
          const url = harness.nodesFrom(attempt)()[0]!;
          const r = await rest(url, 'POST', '/api/users/signin', app.key.token, { userId: u.userId }, 5000).catch((error: Error) => ({ status: 0, body: error.message }));
          if (r.status === 200) {
            u.jwt = r.body.jwt;
            break;
          }
          if (attempt > 20) throw new Error(`cannot sign ${u.name} in: ${r.status} ${JSON.stringify(r.body)}`);
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    },
    nodesFrom: (home) => () => {
      const n = cluster.nodes.length;
      const out: string[] = [];
      for (let k = 0; k < n; k++) {
        const node = cluster.nodes[(home + k) % n]!;
        if (node.process.alive()) out.push(node.url);
      }
      return out;
    },
    log,
    close: async () => {
      faults?.close();
      await cluster.stop();
    },
  };
  if (faults) for (let i = 0; i < cluster.nodes.length; i++) await harness.enlistNode(i);
  return harness;
}

// ---------------------------------------------------------------------------------------------
// The HA topology's processes

/** A process of the HA topology, found by the address it listens on. */
export interface HaProcess {
  pid: number;
  /** Its directory under the state dir (<state>/ha/cassandra-N or redis-N: its working directory). */
  dir: string;
  /** The state dir it was started with (what SERVICES_STATE_DIR must be to restart it). */
  stateDir: string;
  /** Its pid file, and whether it names this pid. */
  pidFile: string;
  pidFileAgrees: boolean;
}

/**
 * The process listening on host:port (ss), with its state dir: scripts/services.sh starts each
 * process of the HA topology in its own directory <state>/ha/<name> and writes its pid file there.
 * (CI keeps the HA topology in a state dir of its own, which the tests are not told: the process
 * says where it is.)
 */
export function haProcess(host: string, port: number, kind: 'cassandra' | 'redis'): HaProcess {
  const out = execFileSync('ss', ['-Hltnp', `src ${host}:${port}`], { encoding: 'utf8' });
  const pid = Number(/pid=(\d+)/.exec(out)?.[1]);
  if (!pid) throw new Error(`no process listens on ${host}:${port}`);
  const dir = readlinkSync(`/proc/${pid}/cwd`);
  const pidFile = join(dir, `${kind}.pid`);
  let pidFileAgrees = false;
  try {
    pidFileAgrees = Number(readFileSync(pidFile, 'utf8').trim()) === pid;
  } catch {
    /* no pid file */
  }
  if (basename(dirname(dir)) !== 'ha' || !basename(dir).startsWith(`${kind}-`)) throw new Error(`${host}:${port} (pid ${pid}, in ${dir}) is not a process of scripts/services.sh --topology ha`);
  return { pid, dir, stateDir: dirname(dirname(dir)), pidFile, pidFileAgrees };
}

/**
 * `scripts/services.sh start --topology ha` with the state dir the topology runs from: starts
 * what is not running and waits until the whole topology is ready. Returns how long it took.
 */
export async function restartMissing(stateDir: string, log: (line: string) => void, timeoutMs = 300_000): Promise<number> {
  const started = now();
  const { stderr, stdout } = await run(join(ROOT, 'scripts/services.sh'), ['start', '--topology', 'ha'], { timeout: timeoutMs, maxBuffer: 16 << 20, env: { ...process.env, SERVICES_STATE_DIR: stateDir } });
  for (const line of `${stdout}${stderr}`.split('\n').filter((l) => /starting|ready|rejoin|replica|master/i.test(l) && !/already running/.test(l)).slice(0, 12)) log(`services.sh: ${line.slice(0, 200)}`);
  return now() - started;
}

/** A Redis connection to one node of the cluster (not a cluster client: each call asks that node). */
async function redisNode(hostPort: string): Promise<Redis> {
  const [host, port] = hostPort.split(':');
  const r = new Redis({ host, port: Number(port ?? 6379), lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000, retryStrategy: () => null });
  r.on('error', () => undefined);
  await r.connect();
  return r;
}

export interface ClusterNodeLine {
  id: string;
  address: string;
  flags: string[];
  master: string;
  slots: [number, number][];
  connected: boolean;
}

/** CLUSTER NODES as one live node of the Redis Cluster sees it. */
export async function redisClusterNodes(topology: Topology, exclude: string[] = []): Promise<{ asSeenBy: string; nodes: ClusterNodeLine[] }> {
  for (const hostPort of topology.redisClusterNodes) {
    if (exclude.includes(hostOf(hostPort))) continue;
    let r: Redis | undefined;
    try {
      r = await redisNode(hostPort);
      const text = (await r.call('CLUSTER', 'NODES')) as string;
      const nodes = text.split('\n').filter(Boolean).map((line) => {
        const [id, addr, flags, master, , , , link, ...slots] = line.split(' ');
        return {
          id: id!,
          address: addr!.split('@')[0]!,
          flags: flags!.split(','),
          master: master!,
          connected: link === 'connected',
          slots: slots.filter((s) => !s.startsWith('[')).map((s) => {
            const [a, b] = s.split('-').map(Number);
            return [a!, b ?? a!] as [number, number];
          }),
        };
      });
      return { asSeenBy: hostPort, nodes };
    } catch {
      /* the next node */
    } finally {
      r?.disconnect();
    }
  }
  throw new Error('no Redis Cluster node answered CLUSTER NODES');
}

/** The slot of a key or channel name (CLUSTER KEYSLOT, asked of a live node). */
export async function keySlot(topology: Topology, name: string): Promise<number> {
  for (const hostPort of topology.redisClusterNodes) {
    let r: Redis | undefined;
    try {
      r = await redisNode(hostPort);
      return Number(await r.call('CLUSTER', 'KEYSLOT', name));
    } catch {
      /* the next node */
    } finally {
      r?.disconnect();
    }
  }
  throw new Error('no Redis Cluster node answered CLUSTER KEYSLOT');
}

/** The master serving a slot now (host:port), as a live node sees it. */
export async function masterOfSlot(topology: Topology, slot: number, exclude: string[] = []): Promise<string | undefined> {
  const { nodes } = await redisClusterNodes(topology, exclude);
  return nodes.find((n) => n.flags.includes('master') && !n.flags.includes('fail') && n.slots.some(([a, b]) => slot >= a && slot <= b))?.address;
}

// ---------------------------------------------------------------------------------------------
// Reading back

/** A chat's whole history from one node, oldest first (retried a few times, each page bounded in time). */
export async function historyFrom(url: string, chatId: string, jwt: string): Promise<StoredMessage[]> {
  let lastError = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const out: StoredMessage[] = [];
      let cursor = '';
      for (;;) {
        const r = await rest(url, 'GET', `/api/messages/getMessages/${chatId}?size=100${cursor ? `&lastMessage=${cursor}` : ''}`, jwt, undefined, 10_000);
        if (r.status !== 200) throw new Error(`${r.status} ${r.body?.code ?? ''}`);
        const page = r.body.messages as StoredMessage[];
        out.push(...page.map((m) => ({ seq: m.seq, messageId: m.messageId, content: m.content })));
        if (page.length < 100) return out.reverse();
        cursor = page.at(-1)!.messageId;
      }
    } catch (error) {
      lastError = (error as Error).message;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  throw new Error(lastError);
}

/**
 * A chat's rows of `chat_messages` read straight from Cassandra, oldest first, at ALL (every
 * replica answers) or, when that fails, QUORUM: every seq block up to the one after `maxSeq`'s.
 */
export async function rowsOf(client: cassandra.Client, keyspace: string, appId: string, chatId: string, maxSeq: number): Promise<{ rows: StoredMessage[]; consistency: string }> {
  const { consistencies } = cassandra.types;
  let lastError: unknown;
  for (const [name, level] of [['ALL', consistencies.all], ['QUORUM', consistencies.quorum]] as const) {
    try {
      const rows: StoredMessage[] = [];
      for (let block = 0; block <= Math.floor(maxSeq / 1024) + 1; block++) {
        const result = await client.execute(`SELECT seq, id, content FROM ${keyspace}.chat_messages WHERE app_id = ? AND chat_id = ? AND block = ?`, [appId, chatId, block], { prepare: true, consistency: level });
        for (const row of result.rows) rows.push({ seq: Number(row.get('seq')), messageId: String(row.get('id')), content: String(row.get('content')) });
      }
      return { rows: rows.sort((a, b) => a.seq - b.seq), consistency: name };
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

/** What the store holds of each chat: history from every live node, and the rows. */
export async function evidence(h: Harness, chats: string[], jwt: string): Promise<ChatEvidence[]> {
  const out: ChatEvidence[] = [];
  const client = connectCassandra({ contactPoints: h.topology.cassandra, localDataCenter: 'datacenter1' });
  try {
    for (const chatId of chats) {
      const histories: ChatEvidence['histories'] = [];
      for (const node of h.cluster.nodes.filter((n) => n.process.alive())) {
        histories.push({ node: node.url, messages: await historyFrom(node.url, chatId, jwt).catch((error: Error) => ({ error: error.message })) });
      }
      const maxSeq = Math.max(0, ...histories.flatMap((x) => (Array.isArray(x.messages) ? x.messages.map((m) => m.seq) : [])));
      const rows = await rowsOf(client, h.cluster.env.CASSANDRA_KEYSPACE!, h.appId, chatId, maxSeq).catch((error: Error) => ({ error: error.message }));
      out.push({ chatId, histories, ...('rows' in rows ? { rows: rows.rows, rowsConsistency: rows.consistency } : { rows }) });
    }
  } finally {
    await client.shutdown();
  }
  return out;
}
