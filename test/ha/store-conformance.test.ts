import t from 'tap';
import { connectCassandra } from '../../common/cassandra/index.ts';
import { CassandraNodeStore } from '../../node/store/index.ts';
import { haSharedNodeKeyspace, requireHaTopology } from '../helpers/services.ts';
import { nodeStoreConformance } from '../node/store-conformance.ts';

/**
 * The node store's conformance suite on the replicated ring: three Cassandra nodes, the keyspace at
 * replication factor 3, so LOCAL_QUORUM is two replicas of three and every compare-and-set is a
 * Paxos round among three. Concurrent compare-and-sets on one partition contend there and may time
 * out with their outcome unknown, which one node never shows.
 */
const ha = await requireHaTopology((line) => t.comment(line));
if (!ha) t.plan(0, 'the replicated topology is not running');
else {
  // On a fresh ring the shared keyspace's schema takes minutes to build (haSharedNodeKeyspace).
  t.setTimeout(900_000);
  const client = connectCassandra({ contactPoints: ha.cassandra, localDataCenter: 'datacenter1' });
  t.teardown(() => client.shutdown());
  const keyspace = await haSharedNodeKeyspace(client);
  // The suite's records carry fresh ids, except the signing keys, one set per keyspace: the suite
  // starts them from none, as on a keyspace of its own (the nodes of a later run make new ones).
  for (const table of ['node_signing_keys', 'node_signing_keyring']) await client.execute(`TRUNCATE ${keyspace}.${table}`);
  const open = async () => ({ store: CassandraNodeStore.open(client, keyspace), another: async () => CassandraNodeStore.open(client, keyspace), cleanup: async () => undefined });
  nodeStoreConformance(t, 'cassandra ring (RF 3)', open);
}
