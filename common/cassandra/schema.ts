import type { CassandraClient } from './client.ts';

/** A named, ordered list of DDL statements; each statement is applied once per keyspace. */
export interface Migration {
  /** Unique within its service, e.g. `node-001-initial`. */
  name: string;
  statements: string[];
}

const KEYSPACE = /^[a-z][a-z0-9_]{0,47}$/;

/** Creates the keyspace if absent (SimpleStrategy; use NetworkTopologyStrategy by hand for several DCs). */
export async function ensureKeyspace(client: CassandraClient, keyspace: string, replicationFactor: number): Promise<void> {
  if (!KEYSPACE.test(keyspace)) throw new Error(`invalid keyspace name ${keyspace}`);
  await client.execute(`CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': ${replicationFactor}}`);
  await client.execute(`CREATE TABLE IF NOT EXISTS ${keyspace}.schema_migrations (name text PRIMARY KEY, applied_at timestamp)`);
}

/**
 * Applies the migrations not yet recorded in `schema_migrations`, in order. Statements are written
 * `IF NOT EXISTS` with `{ks}` for the keyspace, so a run interrupted half-way can simply run again.
 */
export async function migrate(client: CassandraClient, keyspace: string, migrations: readonly Migration[]): Promise<string[]> {
  const done = new Set((await client.execute(`SELECT name FROM ${keyspace}.schema_migrations`)).rows.map((r) => String(r.get('name'))));
  const applied: string[] = [];
  for (const m of migrations) {
    if (done.has(m.name)) continue;
    for (const statement of m.statements) await client.execute(statement.replaceAll('{ks}', keyspace));
    await client.execute(`INSERT INTO ${keyspace}.schema_migrations (name, applied_at) VALUES (?, ?)`, [m.name, new Date()]);
    applied.push(m.name);
  }
  return applied;
}
