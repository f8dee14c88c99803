import { join } from 'node:path';
import { connectCassandra, ensureKeyspace, migrate, type CassandraClient } from '../common/cassandra/index.ts';
import { ensurePrivateDir, octal, tightenPrivateDir, type Config, type Logger } from '../common/index.ts';
import { CassandraControlStore, controlMigrations, LmdbControlStore, type ControlStore } from '../control/index.ts';
import { CassandraNodeStore, LmdbNodeStore, nodeMigrations, type NodeStore } from '../node/index.ts';

export interface Stores {
  control: ControlStore;
  node: NodeStore;
  close(): Promise<void>;
}

/**
 * Connects to Cassandra/ScyllaDB and creates or migrates the keyspace and every table (idempotent).
 * On failure the client is shut down before the error is thrown: its reconnection timer would
 * otherwise keep the process (`npm run schema`) alive after it has reported the failure.
 */
export async function prepareCassandra(config: Readonly<Config>): Promise<{ client: CassandraClient; applied: string[] }> {
  const client = connectCassandra({ contactPoints: config.CASSANDRA_CONTACT_POINTS, localDataCenter: config.CASSANDRA_LOCAL_DC });
  try {
    await client.connect();
    await ensureKeyspace(client, config.CASSANDRA_KEYSPACE, config.CASSANDRA_REPLICATION_FACTOR);
    const applied = await migrate(client, config.CASSANDRA_KEYSPACE, [...controlMigrations, ...nodeMigrations]);
    return { client, applied };
  } catch (error) {
    await client.shutdown().catch(() => undefined);
    throw error;
  }
}

/**
 * The stores `STORE` names: LMDB under DATA_DIR, or one shared Cassandra/ScyllaDB keyspace.
 *
 * The embedded stores hold the signing keys' private halves, so DATA_DIR and the store directories
 * are owner-only (0700) and their files owner read-write (0600): created so, and narrowed to that
 * on every start if they allow more (each change logged as a warning). One that cannot be narrowed
 * (another user owns it) stops the start.
 */
export async function openStores(config: Readonly<Config>, log?: Logger): Promise<Stores> {
  if (config.STORE === 'cassandra') {
    const { client } = await prepareCassandra(config);
    return {
      control: new CassandraControlStore(client, config.CASSANDRA_KEYSPACE),
      node: new CassandraNodeStore(client, config.CASSANDRA_KEYSPACE, undefined, undefined, { searchIndex: config.SEARCH_INDEX === 'on' }),
      close: () => client.shutdown(),
    };
  }
  ensurePrivateDir(config.DATA_DIR);
  const [controlDir, nodeDir] = [join(config.DATA_DIR, 'control'), join(config.DATA_DIR, 'node')];
  // DATA_DIR's own files are left alone: only the stores' files hold keys.
  for (const [dir, files] of [[config.DATA_DIR, false], [controlDir, true], [nodeDir, true]] as const) {
    for (const { path, from, to } of tightenPrivateDir(dir, { files })) {
      log?.warn({ path, from: octal(from), to: octal(to) }, `narrowed the mode of ${path} from ${octal(from)} to ${octal(to)}: it holds private signing keys`);
    }
  }
  const control = LmdbControlStore.open(controlDir);
  const node = LmdbNodeStore.open(nodeDir, undefined, { searchIndex: config.SEARCH_INDEX === 'on' });
  return { control, node, close: async () => void (await Promise.all([control.close(), node.close()])) };
}
