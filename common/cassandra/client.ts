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

const WRITE_TIMEOUT = 0x1100;
const READ_TIMEOUT = 0x1200;

/**
 * An `INSERT … IF NOT EXISTS` that claims a row for `holder` (in column `holderColumn`). A contended
 * compare-and-set may time out with its outcome unknown; the claim is then simply tried again:
 * a row found holding `holder` means the earlier attempt won. True when `holder` holds the row.
 */
export async function claimRow(
  db: cassandra.Client,
  query: string,
  params: unknown[],
  holderColumn: string,
  holder: string,
): Promise<{ won: boolean; row: cassandra.types.Row | undefined }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await db.execute(query, params, { prepare: true });
      const row = result.first() ?? undefined;
      if (applied(result)) return { won: true, row };
      return { won: row !== undefined && String(row.get(holderColumn)) === holder, row };
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (attempt >= 5 || (code !== WRITE_TIMEOUT && code !== READ_TIMEOUT)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.random() * 50));
    }
  }
}
