import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { connectCassandra, ensureKeyspace, type CassandraClient } from '../../common/cassandra/index.ts';

/** A real service a suite needs, and where it listens (from the same variables the service reads). */
export interface ServiceAddress {
  host: string;
  port: number;
}

const addresses = {
  cassandra: (): ServiceAddress => {
    const [host = '127.0.0.1', port = '9042'] = (process.env.CASSANDRA_CONTACT_POINTS ?? '127.0.0.1:9042').split(',')[0]!.split(':');
    return { host, port: Number(port) };
  },
  redis: (): ServiceAddress => {
    const url = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    return { host: url.hostname, port: Number(url.port || 6379) };
  },
};

export type ServiceName = keyof typeof addresses;

function reachable({ host, port }: ServiceAddress, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Where the real service listens, or undefined when it does not. Outside CI a suite then skips with
 * a loud line saying how to start the service; with CI=true a missing service is an error, so a
 * suite can never pass by not running.
 */
export async function requireService(name: ServiceName, log: (line: string) => void): Promise<ServiceAddress | undefined> {
  const address = addresses[name]();
  if (await reachable(address)) return address;
  const how = `start it with: scripts/services.sh start ${name}`;
  if (process.env.CI === 'true') throw new Error(`${name} is not reachable at ${address.host}:${address.port} and CI=true: ${how}`);
  log(`SKIPPED: ${name} is not reachable at ${address.host}:${address.port}; ${how}`);
  return undefined;
}

/**
 * A Cassandra client and a keyspace of this test file's own (RF 1), dropped when the file ends.
 * DDL is slow, so files create one keyspace and let their subtests share it with fresh ids.
 */
export async function testKeyspace(
  t: { teardown(fn: () => unknown): void },
  address: ServiceAddress,
  prefix: string,
): Promise<{ client: CassandraClient; keyspace: string }> {
  const client = connectCassandra({ contactPoints: `${address.host}:${address.port}`, localDataCenter: 'datacenter1' });
  const keyspace = `${prefix}_${randomBytes(6).toString('hex')}`;
  t.teardown(async () => {
    await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
    await client.shutdown();
  });
  await ensureKeyspace(client, keyspace, 1);
  return { client, keyspace };
}
