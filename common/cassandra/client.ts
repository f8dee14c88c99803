import cassandra from 'cassandra-driver';

export type CassandraClient = cassandra.Client;

export interface CassandraOptions {
  /** `host:port` list, comma-separated (CASSANDRA_CONTACT_POINTS). */
  contactPoints: string;
  localDataCenter: string;
}

const { consistencies } = cassandra.types;

/**
 * Consistency: LOCAL_QUORUM for reads and writes, so a read after an acknowledged write sees it
 * with any replication factor; LOCAL_SERIAL for the compare-and-set (LWT) statements that keep
 * usernames, direct chats and refresh tokens unique and read marks monotonic. Every statement is
 * prepared. These settings are the same on ScyllaDB.
 */
export function connectCassandra(options: CassandraOptions): CassandraClient {
  const points = options.contactPoints.split(',').map((p) => p.trim()).filter(Boolean);
  const port = Number(points[0]?.split(':')[1] ?? 9042);
  return new cassandra.Client({
    contactPoints: points.map((p) => p.split(':')[0]!),
    protocolOptions: { port },
    localDataCenter: options.localDataCenter,
    queryOptions: { consistency: consistencies.localQuorum, serialConsistency: consistencies.localSerial, prepare: true },
  });
}

/** Whether a lightweight transaction (`IF …`) was applied. */
export function applied(result: cassandra.types.ResultSet): boolean {
  return result.first()?.get('[applied]') === true;
}
