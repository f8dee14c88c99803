import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { connectCassandra } from '../../common/cassandra/index.ts';
import type { Config } from '../../common/config/index.ts';
import { CassandraControlStore, LmdbControlStore, type ControlStore } from '../store/index.ts';

/** The store the service uses (STORE): LMDB under DATA_DIR, or the Cassandra keyspace; a string says why not. */
export async function openStore(config: Readonly<Config>): Promise<{ store: ControlStore; close: () => Promise<void> } | string> {
  if (config.STORE === 'cassandra') {
    const client = connectCassandra({ contactPoints: config.CASSANDRA_CONTACT_POINTS, localDataCenter: config.CASSANDRA_LOCAL_DC });
    return { store: new CassandraControlStore(client, config.CASSANDRA_KEYSPACE), close: () => client.shutdown() };
  }
  const path = join(config.DATA_DIR, 'control');
  if (!existsSync(path)) return `no store at ${path}; set DATA_DIR to the service's data directory`;
  const store = LmdbControlStore.open(path);
  return { store, close: () => store.close() };
}
