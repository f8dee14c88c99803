import { randomUUID } from 'node:crypto';
import t from 'tap';
import { migrate } from '../../common/cassandra/index.ts';
import { CassandraControlStore, controlMigrations } from '../../control/store/index.ts';
import { requireService, testKeyspace } from '../helpers/index.ts';
import { controlStoreConformance } from './store-conformance.ts';

const cassandra = await requireService('cassandra', (line) => t.comment(line));
if (!cassandra) t.skip('cassandra not running', () => undefined);
else {
  // A keyspace of this file's own: DDL is slow, so it is created once and dropped at the end.
  const { client, keyspace } = await testKeyspace(t, cassandra, 'control_test');
  t.test('cassandra: migrations apply once, and running them again is a no-op', async (t) => {
    t.same(await migrate(client, keyspace, controlMigrations), controlMigrations.map((m) => m.name));
    t.same(await migrate(client, keyspace, controlMigrations), [], 'nothing left to apply');
  });
  // Each store gets a scope of its own (cluster registry, signing keys): a fresh store per subtest.
  controlStoreConformance(t, 'cassandra', async () => ({ store: new CassandraControlStore(client, keyspace, randomUUID()), cleanup: async () => undefined }));
}
