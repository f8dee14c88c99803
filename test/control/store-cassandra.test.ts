import { randomBytes, randomUUID } from 'node:crypto';
import t from 'tap';
import { connectCassandra, ensureKeyspace, migrate } from '../../common/cassandra/index.ts';
import { CassandraControlStore, controlMigrations } from '../../control/store/index.ts';
import { requireService } from '../helpers/index.ts';
import { controlStoreConformance } from './store-conformance.ts';

const cassandra = await requireService('cassandra', (line) => t.comment(line));
if (!cassandra) t.pass('skipped: cassandra not running');
else {
  const client = connectCassandra({ contactPoints: `${cassandra.host}:${cassandra.port}`, localDataCenter: 'datacenter1' });
  // A keyspace of this run's own, created once for the file (DDL is slow) and dropped at the end.
  const keyspace = `control_test_${randomBytes(6).toString('hex')}`;
  t.teardown(async () => {
    await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
    await client.shutdown();
  });
  await ensureKeyspace(client, keyspace, 1);
  t.test('cassandra: migrations apply once, and running them again is a no-op', async (t) => {
    t.same(await migrate(client, keyspace, controlMigrations), controlMigrations.map((m) => m.name));
    t.same(await migrate(client, keyspace, controlMigrations), [], 'nothing left to apply');
  });
  // Each store gets a scope of its own (cluster registry, signing keys): a fresh store per subtest.
  controlStoreConformance(t, 'cassandra', async () => ({ store: new CassandraControlStore(client, keyspace, randomUUID()), cleanup: async () => undefined }));
}
