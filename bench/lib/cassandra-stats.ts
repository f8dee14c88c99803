import type { Host } from 'cassandra-driver';
import { connectCassandra, type CassandraClient } from '../../common/cassandra/index.ts';

/**
 * What Cassandra did during a benchmark step, read from its virtual tables before and after it:
 * requests received, partition mutations applied, reads served, Paxos (compare-and-set) rounds,
 * and writes per table of the run's keyspace. The counters are node-wide and cumulative since the
 * node started: a difference covers everything the node did in between, the run's statements and
 * anything else (other keyspaces, the nodes' own bookkeeping, these snapshots' own two requests).
 * On a ring they are summed over its nodes: a write at replication factor 3 is applied (and
 * counted) on three, while a request is received by one coordinator and counted once.
 */
export interface CassandraCounters {
  /** Completed tasks per thread pool (`system_views.thread_pools`). */
  pools: Record<string, number>;
  /** Local writes per table (`system_views.local_write_latency`), keyed `keyspace.table`. */
  writes: Record<string, number>;
}

/** The deltas of two snapshots, each divided by the messages it is charged to. */
export interface StatementsPerMessage {
  /** Native-Transport-Requests: CQL requests received (a batch counts once). */
  requests: number;
  /** MutationStage: partition mutations applied. */
  mutations: number;
  /** ReadStage: local reads (a compare-and-set reads its partition too). */
  reads: number;
  /** Writes to system.paxos: the state of compare-and-set (lightweight transaction) rounds, several per round. */
  paxosWrites: number;
  /** Writes to the run's keyspace, in total and per table (tables with none left out). */
  keyspaceWrites: number;
  byTable: Record<string, number>;
}

const POOLS = { requests: 'Native-Transport-Requests', mutations: 'MutationStage', reads: 'ReadStage' } as const;

/** One connection to Cassandra that takes snapshots of its nodes' counters, summed (one node: its own). */
export class CassandraStats {
  private hosts: Host[] | undefined;

  private constructor(
    private readonly client: CassandraClient,
    /** The run's keyspace, whose writes are counted per table. */
    readonly keyspace: string,
  ) {}

  /** Connects to `contactPoints` (`host:port,…`, as CASSANDRA_CONTACT_POINTS). */
  static async open(contactPoints: string, keyspace: string): Promise<CassandraStats> {
    const client = connectCassandra({ contactPoints, localDataCenter: 'datacenter1' });
    try {
      await client.connect();
    } catch (error) {
      await client.shutdown().catch(() => undefined);
      throw error;
    }
    return new CassandraStats(client, keyspace);
  }

  /** How many nodes each snapshot sums (known once the first is taken). */
  get nodes(): number {
    return this.hosts?.length ?? 0;
  }

  /**
   * The counters now, summed over the same nodes each time: every node the driver knew at the
   * first snapshot, each asked itself (virtual tables are local to the node asked).
   */
  async snapshot(): Promise<CassandraCounters> {
    this.hosts ??= this.client.hosts.values();
    const each = await Promise.all((this.hosts.length > 0 ? this.hosts : [undefined]).map((host) => this.nodeSnapshot(host)));
    const out: CassandraCounters = { pools: {}, writes: {} };
    for (const one of each)
      for (const part of ['pools', 'writes'] as const) for (const [key, n] of Object.entries(one[part])) out[part][key] = (out[part][key] ?? 0) + n;
    return out;
  }

  private async nodeSnapshot(host: Host | undefined): Promise<CassandraCounters> {
    const options = host ? { host } : {};
    const [pools, writes] = await Promise.all([
      this.client.execute('SELECT name, completed_tasks FROM system_views.thread_pools', [], options),
      this.client.execute('SELECT keyspace_name, table_name, count FROM system_views.local_write_latency', [], options),
    ]);
    const out: CassandraCounters = { pools: {}, writes: {} };
    for (const row of pools.rows) out.pools[String(row.get('name'))] = Number(row.get('completed_tasks'));
    for (const row of writes.rows) {
      const count = Number(row.get('count'));
      if (count > 0) out.writes[`${String(row.get('keyspace_name'))}.${String(row.get('table_name'))}`] = count;
    }
    return out;
  }

  close(): Promise<void> {
    return this.client.shutdown();
  }
}

const delta = (after: Record<string, number>, before: Record<string, number>, key: string) => Math.max(0, (after[key] ?? 0) - (before[key] ?? 0));

/** What happened between two snapshots per message (`messages` > 0), or undefined without messages. */
export function statementsPerMessage(before: CassandraCounters, after: CassandraCounters, keyspace: string, messages: number): StatementsPerMessage | undefined {
  if (messages <= 0) return undefined;
  const per = (n: number) => Math.round((1000 * n) / messages) / 1000;
  const byTable: Record<string, number> = {};
  let keyspaceWrites = 0;
  for (const key of Object.keys(after.writes).sort()) {
    if (!key.startsWith(`${keyspace}.`)) continue;
    const n = delta(after.writes, before.writes, key);
    keyspaceWrites += n;
    if (n > 0) byTable[key.slice(keyspace.length + 1)] = per(n);
  }
  return {
    requests: per(delta(after.pools, before.pools, POOLS.requests)),
    mutations: per(delta(after.pools, before.pools, POOLS.mutations)),
    reads: per(delta(after.pools, before.pools, POOLS.reads)),
    paxosWrites: per(delta(after.writes, before.writes, 'system.paxos')),
    keyspaceWrites: per(keyspaceWrites),
    byTable,
  };
}
