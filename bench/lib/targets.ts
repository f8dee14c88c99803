import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { startCluster } from '../../bin/spawn-cluster.ts';
import { nodeScript, removeDir, startService, withOpenFileLimit } from '../../bin/spawn.ts';
import type { SystemName } from '../load/systems.ts';
import { CassandraStats } from './cassandra-stats.ts';
import { whileRunning } from './cleanup.ts';
import { BENCH_ENV, provisionApp, type Provisioned } from './provision.ts';

/** A system under test, running: where its nodes listen and which processes to measure. */
export interface Target {
  system: SystemName;
  /** Base URLs of the nodes clients connect to (one, or three in the cluster scenario). */
  nodes: string[];
  pids: number[];
  /** The backing services this system uses in the run, for what they do during each step. */
  services?: TargetServices;
  /** This service only: the application and users set up for the run. */
  app?: Provisioned;
  /** This service only: the control service's base URL (for more tenants). */
  control?: string;
  /** This service on one node only: its DATA_DIR (removed by `stop`). */
  dataDir?: string;
  stop(): Promise<void>;
}

/** Redis and Cassandra as one system uses them: process ids where known (their CPU), Cassandra's counters. */
export interface TargetServices {
  /** Every Redis process (six in a Redis Cluster), none when not known. */
  redisPids?: number[];
  /** This service on Cassandra only: every Cassandra process (three on the replicated ring). */
  cassandraPids?: number[];
  /** Snapshots of Cassandra's counters, with the run's keyspace (this service on Cassandra only). */
  cassandra?: CassandraStats;
}

const PEERS = { uws: 'uws.ts', socketio: 'socketio.ts' } as const;

/** One peer server process; resolves once it prints where it listens. */
async function startPeer(system: 'uws' | 'socketio', env: Record<string, string>, nofile?: number, nodeArgs: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  const [command, args] = withOpenFileLimit(nofile, process.execPath, [...nodeArgs, ...nodeScript(`bench/peers/${PEERS[system]}`)]);
  const child = spawn(command, args, { env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const { listening } = JSON.parse(line) as { listening?: string };
        if (listening) resolve(listening);
      } catch {
        /* not the line we wait for */
      }
    });
    child.once('exit', (code) => reject(new Error(`${system} peer exited with ${code}`)));
  });
  return { url, child };
}

const stopChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });

export interface StartOptions {
  /** Chat users to create (this service only). */
  users: number;
  /** Open-file limit for the server processes (connections scenario). */
  nofile?: number;
  onProgress?: () => void;
  /** Write a V8 CPU profile of each of this service's processes into this directory (`--cpu-prof`). */
  profileDir?: string;
  /** This service's settings beyond BENCH_ENV. */
  env?: Record<string, string>;
  /** Node flags for every server process started (this service's and the peers'), e.g. MEMORY_MEASURE_ARGS. */
  nodeArgs?: string[];
}

// Node refuses --cpu-prof in NODE_OPTIONS: it goes on the command line.
const profiling = (dir?: string): string[] => (dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []);

/** The target, registered to be stopped if the run is cut short. */
function tracked(target: Target): Target {
  const done = whileRunning(target.stop);
  return { ...target, stop: async () => {
    done();
    await target.stop();
  } };
}

/** One node of `system` on embedded defaults (this service: LMDB in a fresh data directory). */
export async function startSingle(system: SystemName, options: StartOptions): Promise<Target> {
  if (system !== 'chat') {
    const { url, child } = await startPeer(system, {}, options.nofile, options.nodeArgs);
    return tracked({ system, nodes: [url], pids: [child.pid!], stop: () => stopChild(child) });
  }
  const service = await startService({ ...BENCH_ENV, ...options.env }, undefined, { nofile: options.nofile, nodeArgs: [...(options.nodeArgs ?? []), ...profiling(options.profileDir)] });
  try {
    const app = await provisionApp(service.controlUrl, [service.nodeUrl], options.users, options.onProgress);
    return tracked({
      system,
      nodes: [service.nodeUrl],
      pids: [service.pid],
      app,
      control: service.controlUrl,
      dataDir: service.dataDir,
      stop: async () => {
        await service.stop();
        removeDir(service.dataDir);
      },
    });
  } catch (error) {
    await service.stop();
    throw error;
  }
}

export interface ClusterServices {
  /** Contact points, as CASSANDRA_CONTACT_POINTS. */
  cassandra: string;
  /** REDIS_URL (with a Redis Cluster, one of its nodes: the peers' and credentials only). */
  redisUrl: string;
  /** Process ids of Redis and Cassandra where known (each process of a replicated topology), for the CPU they use during a run. */
  redisPids: number[];
  cassandraPids: number[];
  /** This service's settings for these backends (the replicated topology: REDIS_CLUSTER_NODES, the replication factor, its keyspace). */
  nodeEnv?: Record<string, string>;
  /** The keyspace in nodeEnv is kept when the nodes stop (its schema took minutes to build); otherwise each run's own is dropped. */
  keepKeyspace?: boolean;
}

/** Three nodes of `system` sharing Redis (and Cassandra for this service). */
export async function startThree(system: SystemName, services: ClusterServices, options: StartOptions): Promise<Target> {
  if (system !== 'chat') {
    // One channel prefix per cluster: another benchmark's peers on the same Redis stay apart.
    const env = { REDIS_URL: services.redisUrl, CHANNEL_PREFIX: `bench-${randomUUID()}:` };
    const peers = await Promise.all([0, 1, 2].map(() => startPeer(system, env, options.nofile)));
    return tracked({ system, nodes: peers.map((p) => p.url), pids: peers.map((p) => p.child.pid!), services: { redisPids: services.redisPids }, stop: async () => void (await Promise.all(peers.map((p) => stopChild(p.child)))) });
  }
  const cluster = await startCluster({ size: 3, cassandra: services.cassandra, redisUrl: services.redisUrl, env: { ...BENCH_ENV, ...options.env, ...services.nodeEnv }, nodeArgs: profiling(options.profileDir) });
  let stats: CassandraStats | undefined;
  const stop = async () => {
    await stats?.close().catch(() => undefined);
    // cluster.stop() also drops the cluster's keyspace: a kept one only sees its processes stop.
    if (services.keepKeyspace) await Promise.all([cluster.control.stop(), ...cluster.nodes.map((n) => n.process.stop())]);
    else await cluster.stop();
  };
  try {
    stats = await CassandraStats.open(services.cassandra, cluster.env.CASSANDRA_KEYSPACE!);
    const nodes = cluster.nodes.map((n) => n.url);
    const app = await provisionApp(cluster.control.controlUrl, nodes, options.users, options.onProgress);
    return tracked({ system, nodes, pids: cluster.nodes.map((n) => n.process.pid), services: { redisPids: services.redisPids, cassandraPids: services.cassandraPids, cassandra: stats }, app, stop });
  } catch (error) {
    await stop();
    throw error;
  }
}
