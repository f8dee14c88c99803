import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { connectCassandra, ensureKeyspace, migrate, type CassandraClient } from '../common/cassandra/index.ts';
import type { Config } from '../common/index.ts';
import { CassandraControlStore, controlMigrations, LmdbControlStore, type ControlStore } from '../control/index.ts';
import { CassandraNodeStore, LmdbNodeStore, nodeMigrations, type NodeStore } from '../node/index.ts';

export interface Stores {
  control: ControlStore;
  node: NodeStore;
  close(): Promise<void>;
}

/** Connects to Cassandra/ScyllaDB and creates or migrates the keyspace and every table (idempotent). */
export async function prepareCassandra(config: Readonly<Config>): Promise<{ client: CassandraClient; applied: string[] }> {
  const client = connectCassandra({ contactPoints: config.CASSANDRA_CONTACT_POINTS, localDataCenter: config.CASSANDRA_LOCAL_DC });
  await client.connect();
  await ensureKeyspace(client, config.CASSANDRA_KEYSPACE, config.CASSANDRA_REPLICATION_FACTOR);
  const applied = await migrate(client, config.CASSANDRA_KEYSPACE, [...controlMigrations, ...nodeMigrations]);
  return { client, applied };
}

/** The stores `STORE` names: LMDB under DATA_DIR, or one shared Cassandra/ScyllaDB keyspace. */
export async function openStores(config: Readonly<Config>): Promise<Stores> {
  if (config.STORE === 'cassandra') {
    const { client } = await prepareCassandra(config);
    return {
      control: new CassandraControlStore(client, config.CASSANDRA_KEYSPACE),
      node: new CassandraNodeStore(client, config.CASSANDRA_KEYSPACE),
      close: () => client.shutdown(),
    };
  }
  mkdirSync(config.DATA_DIR, { recursive: true });
  const control = LmdbControlStore.open(join(config.DATA_DIR, 'control'));
  const node = LmdbNodeStore.open(join(config.DATA_DIR, 'node'));
  return { control, node, close: async () => void (await Promise.all([control.close(), node.close()])) };
}
