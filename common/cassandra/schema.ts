import { DDL_OPTIONS, STATEMENT_OPTIONS, timedOut, type CassandraClient } from './client.ts';

/** A named, ordered list of DDL statements; each statement is applied once per keyspace. */
export interface Migration {
  /** Unique within the keyspace, e.g. `node-001-initial`. */
  name: string;
  statements: string[];
  /**
   * Moves data after the statements ran (a copy into a new layout). It must be idempotent: a run
   * that was interrupted is run again whole, since the migration is recorded only after it.
   */
  data?: (client: CassandraClient, keyspace: string) => Promise<void>;
}

const KEYSPACE = /^[a-z][a-z0-9_]{0,47}$/;

function checkKeyspace(keyspace: string): void {
  // Keyspace names are spliced into CQL (identifiers cannot be bound), so only plain names pass.
  if (!KEYSPACE.test(keyspace)) throw new Error(`invalid keyspace name ${keyspace}`);
}

/**
 * Creates the keyspace if absent, and its `schema_migrations` table. SimpleStrategy, because one
 * replication factor is all the service asks for; for several data centers create the keyspace
 * by hand with NetworkTopologyStrategy first (this then leaves it as it is).
 */
export async function ensureKeyspace(client: CassandraClient, keyspace: string, replicationFactor: number): Promise<void> {
  checkKeyspace(keyspace);
  if (!Number.isInteger(replicationFactor) || replicationFactor < 1) throw new Error(`invalid replication factor ${replicationFactor}`);
  await client.execute(`CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': ${replicationFactor}}`, [], DDL_OPTIONS);
  await client.execute(`CREATE TABLE IF NOT EXISTS ${keyspace}.schema_migrations (name text PRIMARY KEY, applied_at timestamp)`, [], DDL_OPTIONS);
}

/**
 * How long the read of the applied migrations is tried again while it times out. It reads the
 * whole table, a range read that Cassandra does not speculatively retry: right after a replica
 * dies, until the other nodes' failure detector marks it down (about 20 s on a three-node ring),
 * a coordinator may still ask it for part of the scan and wait out its range timeout (10 s), and
 * a schema run with one node of three down would fail where LOCAL_QUORUM can be met.
 */
const APPLIED_READ_RETRY_MS = 60_000;

async function appliedNames(client: CassandraClient, keyspace: string): Promise<Set<string>> {
  const deadline = Date.now() + APPLIED_READ_RETRY_MS;
  for (;;) {
    try {
      const rows = (await client.execute(`SELECT name FROM ${keyspace}.schema_migrations`, [], { ...STATEMENT_OPTIONS })).rows;
      return new Set(rows.map((r) => String(r.get('name'))));
    } catch (error) {
      if (!timedOut(error) || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

async function apply(client: CassandraClient, keyspace: string, m: Migration): Promise<void> {
  // Recorded only after its last statement, so an interrupted run re-applies the whole migration;
  // statements are written `IF NOT EXISTS` (and a column an ALTER adds again is skipped), and
  // data steps are idempotent, which makes that harmless. The driver waits for schema agreement
  // after each DDL statement, so the next one sees the tables before it.
  for (const statement of m.statements) {
    try {
      await client.execute(statement.replaceAll('{ks}', keyspace), [], DDL_OPTIONS);
    } catch (error) {
      // `ALTER TABLE … ADD` has no portable IF NOT EXISTS (ScyllaDB lacks it): a column added by an
      // interrupted run is simply there already.
      if (!(/^\s*ALTER TABLE/i.test(statement) && /already exists/i.test(String((error as Error).message)))) throw error;
    }
  }
  await m.data?.(client, keyspace);
  await client.execute(`INSERT INTO ${keyspace}.schema_migrations (name, applied_at) VALUES (?, ?)`, [m.name, new Date()], { ...STATEMENT_OPTIONS });
}

/**
 * Applies migrations not yet recorded in `<keyspace>.schema_migrations`, in order; running them
 * again is a no-op. Statements name the keyspace as `{ks}`. Either a list of migrations (returns
 * the names applied now) or one by name and statements (returns whether it was applied now).
 */
export function migrate(client: CassandraClient, keyspace: string, migrations: readonly Migration[]): Promise<string[]>;
export function migrate(client: CassandraClient, keyspace: string, name: string, statements: readonly string[]): Promise<boolean>;
export async function migrate(
  client: CassandraClient,
  keyspace: string,
  what: readonly Migration[] | string,
  statements: readonly string[] = [],
): Promise<string[] | boolean> {
  checkKeyspace(keyspace);
  const list: Migration[] = typeof what === 'string' ? [{ name: what, statements: [...statements] }] : [...what];
  const done = await appliedNames(client, keyspace);
  const applied: string[] = [];
  for (const m of list) {
    if (done.has(m.name)) continue;
    await apply(client, keyspace, m);
    done.add(m.name);
    applied.push(m.name);
  }
  return typeof what === 'string' ? applied.length === 1 : applied;
}
