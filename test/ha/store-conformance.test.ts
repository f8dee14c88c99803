import t from 'tap';
import { migrate } from '../../common/cassandra/index.ts';
import { CassandraNodeStore, nodeMigrations } from '../../node/store/index.ts';
import { haTestKeyspace, requireHaTopology } from '../helpers/services.ts';
import { nodeStoreConformance } from '../node/store-conformance.ts';

/**
 * The node store's conformance suite on the replicated ring: three Cassandra nodes, a keyspace of
 * this file's own at replication factor 3, so LOCAL_QUORUM is two replicas of three and every
 * compare-and-set is a Paxos round among three. Concurrent compare-and-sets on one partition
 * contend there and may time out with their outcome unknown, which one node never shows.
 */
const ha = await requireHaTopology((line) => t.comment(line));
if (!ha) t.plan(0, 'the replicated topology is not running');
else {
  // The whole schema on a fresh keyspace of the ring: minutes of DDL on two cores.
  t.setTimeout(900_000);
  const { client, keyspace } = await haTestKeyspace(t, ha.cassandra, 'chat_ha_store');
  await migrate(client, keyspace, nodeMigrations);
  const open = async () => ({ store: CassandraNodeStore.open(client, keyspace), another: async () => CassandraNodeStore.open(client, keyspace), cleanup: async () => undefined });
  nodeStoreConformance(t, 'cassandra ring (RF 3)', open);
}
