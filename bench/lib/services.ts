import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { connectCassandra, ensureKeyspace, migrate } from '../../common/cassandra/index.ts';
import { controlMigrations } from '../../control/index.ts';
import { nodeMigrations } from '../../node/index.ts';
import type { Context } from '../scenarios/context.ts';
import { whileRunning } from './cleanup.ts';
import type { ClusterServices } from './targets.ts';

const SERVICES = new URL('../../scripts/services.sh', import.meta.url).pathname;

/** A service's pid from the file scripts/services.sh keeps in its state dir (same default). */
function servicePid(name: 'redis' | 'cassandra'): number | undefined {
  const dir = process.env.SERVICES_STATE_DIR ?? new URL('../../tmp/services', import.meta.url).pathname;
  try {
    const pid = Number(readFileSync(`${dir}/${name}/${name}.pid`, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether something accepts connections at `host:port` (within 2 s). */
function reachable(address: string): Promise<boolean> {
  const url = new URL(address.includes('://') ? address : `tcp://${address}`);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Cassandra and Redis for a run: those the environment names when they answer, else started with
 * scripts/services.sh (and stopped again by `stop`, also when the run is cut short).
 */
export async function clusterServices(ctx: Context): Promise<{ services: ClusterServices; stop: () => void }> {
  const cassandra = process.env.CASSANDRA_CONTACT_POINTS ?? `127.0.0.1:${process.env.CASSANDRA_PORT ?? 9042}`;
  const redisUrl = process.env.REDIS_URL ?? `redis://127.0.0.1:${process.env.REDIS_PORT ?? 6379}`;
  // `status` exits 0 only when both answer (and 1 when either is stopped or not ready yet); both
  // answering where the environment says (started some other way) will do as well.
  const wasReady = spawnSync(SERVICES, ['status'], { stdio: 'ignore' }).status === 0 || ((await reachable(cassandra.split(',')[0]!)) && (await reachable(redisUrl)));
  let stopServices = () => undefined as void;
  if (!wasReady) {
    ctx.progress.plan(1, 'starting Redis and Cassandra (scripts/services.sh)');
    execFileSync(SERVICES, ['start'], { stdio: ['ignore', 'ignore', 'inherit'] });
    stopServices = () => void execFileSync(SERVICES, ['stop'], { stdio: 'ignore' });
    ctx.progress.step();
  }
  const untrack = whileRunning(stopServices);
  const pids = (name: 'redis' | 'cassandra') => [servicePid(name)].filter((pid): pid is number => pid !== undefined);
  return {
    services: { cassandra, redisUrl, redisPids: pids('redis'), cassandraPids: pids('cassandra') },
    stop: () => {
      untrack();
      stopServices();
    },
  };
}

/**
 * The keyspace of this service on the replicated topology, kept between runs: its schema takes
 * minutes to build there (each DDL statement waits for the three nodes to agree on the schema),
 * while finding it up to date is one read. Every run uses an application of its own in it.
 */
export const HA_KEYSPACE = 'chat_bench_ha';

/** The process listening at `host:port` (`ss -Hltnp`), or undefined when none is found. */
export function listenerPid(host: string, port: number): number | undefined {
  try {
    const out = execFileSync('ss', ['-Hltnp', `src ${host}:${port}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const pid = Number(/pid=(\d+)/.exec(out)?.[1]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A pid from a pid file of scripts/services.sh's ha state directory (cassandra-N, redis-N). */
function haPidFile(dir: string, name: 'redis' | 'cassandra'): number | undefined {
  const base = process.env.SERVICES_STATE_DIR ?? new URL('../../tmp/services', import.meta.url).pathname;
  try {
    const pid = Number(readFileSync(`${base}/ha/${dir}/${name}.pid`, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** `export A=1 B=2` (scripts/services.sh env) as a record. */
export function parseExports(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const word of line.trim().replace(/^export\s+/, '').split(/\s+/)) {
    const at = word.indexOf('=');
    if (at > 0) out[word.slice(0, at)] = word.slice(at + 1);
  }
  return out;
}

/** `host:port,…` as pairs. */
const hostPorts = (list: string, defaultPort: number) =>
  list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((point) => {
      const [host = '', port] = point.split(':');
      return { host, port: port ? Number(port) : defaultPort };
    });

/**
 * The replicated topology (scripts/services.sh --topology ha): the Cassandra ring and the Redis
 * Cluster, where HA_CASSANDRA_CONTACT_POINTS and HA_REDIS_CLUSTER_NODES say (as the tests find
 * it), else where `env --topology ha` says. Used when `status --topology ha` exits 0 or every node
 * answers there; otherwise started with `start --topology ha` (and stopped again by `stop` when
 * none of them answered before). Every process's pid comes from the socket it listens on (else its
 * pid file). This service's nodes get REDIS_CLUSTER_NODES, the replication factor (as many as the
 * ring's nodes, at most 3) and the kept keyspace (HA_KEYSPACE).
 */
export async function haServices(ctx: Context): Promise<{ services: ClusterServices; redisClusterNodes: string; replicationFactor: number; stop: () => void }> {
  const vars = parseExports(execFileSync(SERVICES, ['env', '--topology', 'ha'], { encoding: 'utf8' }));
  const contactPoints = process.env.HA_CASSANDRA_CONTACT_POINTS || vars.CASSANDRA_CONTACT_POINTS || '';
  const redisClusterNodes = process.env.HA_REDIS_CLUSTER_NODES || vars.REDIS_CLUSTER_NODES || '';
  const cassandraNodes = hostPorts(contactPoints, 9042);
  const redisNodes = hostPorts(redisClusterNodes, 6379);
  if (cassandraNodes.length === 0 || redisNodes.length === 0) throw new Error('the replicated topology names no Cassandra or no Redis node (scripts/services.sh env --topology ha, HA_CASSANDRA_CONTACT_POINTS, HA_REDIS_CLUSTER_NODES)');
  let stopServices = () => undefined as void;
  const answered = async () => Promise.all([...cassandraNodes, ...redisNodes].map((n) => reachable(`${n.host}:${n.port}`)));
  const before = spawnSync(SERVICES, ['status', '--topology', 'ha'], { stdio: 'ignore' }).status === 0 ? undefined : await answered();
  if (before && !before.every(Boolean)) {
    ctx.progress.plan(1, 'starting the replicated topology (scripts/services.sh start --topology ha)');
    ctx.log('the replicated topology is not ready: scripts/services.sh start --topology ha (about a minute on two cores)');
    execFileSync(SERVICES, ['start', '--topology', 'ha'], { stdio: ['ignore', 'ignore', 'inherit'] });
    // Stopped again after the run only when this run started all of it.
    if (!before.some(Boolean)) stopServices = () => void execFileSync(SERVICES, ['stop', '--topology', 'ha'], { stdio: 'ignore' });
    ctx.progress.step();
  }
  const untrack = whileRunning(stopServices);
  const pids = (nodes: { host: string; port: number }[], name: 'redis' | 'cassandra') =>
    nodes.map((n, i) => listenerPid(n.host, n.port) ?? haPidFile(`${name}-${i + 1}`, name)).filter((pid): pid is number => pid !== undefined);
  // One replica per node up to three, as scripts/services.sh says (LOCAL_QUORUM survives one down).
  const replicationFactor = Math.min(3, cassandraNodes.length);
  const services: ClusterServices = {
    cassandra: contactPoints,
    // With REDIS_CLUSTER_NODES set, REDIS_URL gives only credentials and TLS (none here).
    redisUrl: `redis://${redisNodes[0]?.host}:${redisNodes[0]?.port}`,
    redisPids: pids(redisNodes, 'redis'),
    cassandraPids: pids(cassandraNodes, 'cassandra'),
    nodeEnv: { REDIS_CLUSTER_NODES: redisClusterNodes, CASSANDRA_REPLICATION_FACTOR: String(replicationFactor), CASSANDRA_KEYSPACE: HA_KEYSPACE },
    keepKeyspace: true,
  };
  if (services.cassandraPids.length !== cassandraNodes.length) ctx.log(`found ${services.cassandraPids.length} of ${cassandraNodes.length} Cassandra processes: their CPU is summed over those`);
  return {
    services,
    redisClusterNodes,
    replicationFactor,
    stop: () => {
      untrack();
      stopServices();
    },
  };
}

/**
 * Creates the kept keyspace at `replicationFactor` with every table, or finds it up to date
 * (idempotent, as the service's own start: the migrations not yet recorded are applied). Refuses
 * one that exists at another replication factor. Returns the migrations applied and how long it took.
 */
export async function prepareKeyspace(contactPoints: string, keyspace: string, replicationFactor: number): Promise<{ applied: string[]; seconds: number }> {
  const started = Date.now();
  const client = connectCassandra({ contactPoints, localDataCenter: 'datacenter1' });
  try {
    await client.connect();
    const existing = await client.execute('SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = ?', [keyspace], { prepare: true });
    const factor = existing.rows[0] ? Number((existing.rows[0].get('replication') as Record<string, string>).replication_factor) : undefined;
    if (factor !== undefined && factor !== replicationFactor) throw new Error(`keyspace ${keyspace} exists at replication factor ${factor}, not ${replicationFactor}: drop it (DROP KEYSPACE ${keyspace}) and run again`);
    await ensureKeyspace(client, keyspace, replicationFactor);
    const applied = await migrate(client, keyspace, [...controlMigrations, ...nodeMigrations]);
    return { applied, seconds: Math.round((Date.now() - started) / 1000) };
  } finally {
    await client.shutdown().catch(() => undefined);
  }
}

/**
 * Bytes on disk ("space used (live)", SSTables) of each table of `keyspace` on the single
 * Cassandra node of scripts/services.sh, after flushing its memtables (nodetool over JMX:
 * CASSANDRA_JMX_PORT); a string saying why when nodetool cannot reach it.
 */
export function cassandraTableBytes(keyspace: string): Record<string, number> | string {
  const run = (args: string[]) => spawnSync(SERVICES, ['nodetool', '--topology', 'single', ...args], { encoding: 'utf8', timeout: 300_000 });
  const flushed = run(['flush', keyspace]);
  if (flushed.status !== 0) return `nodetool flush failed: ${(flushed.stderr || flushed.stdout || String(flushed.error)).trim().split('\n').at(-1)}`;
  const stats = run(['tablestats', '-F', 'json', keyspace]);
  if (stats.status !== 0) return `nodetool tablestats failed: ${(stats.stderr || stats.stdout).trim().split('\n').at(-1)}`;
  const tables = (JSON.parse(stats.stdout) as Record<string, { tables?: Record<string, { space_used_live?: string | number }> }>)[keyspace]?.tables ?? {};
  return Object.fromEntries(Object.entries(tables).map(([name, t]) => [name, Number(t.space_used_live ?? 0)]));
}
