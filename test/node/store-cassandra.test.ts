import t from 'tap';
import { migrate } from '../../common/cassandra/index.ts';
import { CassandraNodeStore, nodeMigrations } from '../../node/store/index.ts';
import { requireService, testKeyspace } from '../helpers/index.ts';
import { nodeStoreConformance } from './store-conformance.ts';

const cassandra = await requireService('cassandra', (line) => t.comment(line));
if (!cassandra) t.pass('skipped: cassandra not running');
else {
  // A keyspace of this file's own: DDL is slow, so it is created once and dropped at the end.
  const { client, keyspace } = await testKeyspace(t, cassandra, 'chat_test');

  t.test('cassandra: migrations apply once, and running them again is a no-op', async (t) => {
    t.same(await migrate(client, keyspace, nodeMigrations), nodeMigrations.map((m) => m.name));
    t.same(await migrate(client, keyspace, nodeMigrations), [], 'nothing left to apply');
    const recorded = (await client.execute(`SELECT name FROM ${keyspace}.schema_migrations`)).rows.map((r) => String(r.get('name')));
    t.same(recorded.sort(), nodeMigrations.map((m) => m.name).sort());
  });

  // The suite's records all carry fresh ids, so its subtests share the keyspace safely.
  nodeStoreConformance(t, 'cassandra', async () => ({ store: new CassandraNodeStore(client, keyspace), cleanup: async () => undefined }));
}
