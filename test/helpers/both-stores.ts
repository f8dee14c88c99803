import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import { startService, type Running } from '../../bin/spawn.ts';
import { requireService } from './services.ts';

/** Write budgets lifted: these suites measure behaviour, not the per-user rate limits. */
const UNLIMITED = { USER_SENDS_PER_SECOND: '100000', USER_WRITES_PER_SECOND: '100000', USER_REQUESTS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', WS_ACTIONS_PER_SECOND: '100000' };

/**
 * Runs `body` as a subtest against a whole service (control and node in one process) on each node
 * store: the embedded one (LMDB) always, and Cassandra in a keyspace of its own, dropped at the
 * end. Without Cassandra the second is a recorded skip, or with CI=true a failure (requireService).
 */
export async function onBothStores(t: Test, name: string, body: (t: Test, svc: Running) => Promise<void>, env: Record<string, string> = {}): Promise<void> {
  await t.test(`${name} (embedded store)`, async (t) => {
    const svc = await startService({ ...UNLIMITED, ...env });
    t.teardown(() => svc.stop());
    await body(t, svc);
  });
  const cassandra = await requireService('cassandra', (line) => t.comment(line));
  if (!cassandra) {
    t.skip(`${name} (Cassandra): not running`, () => undefined);
    return;
  }
  await t.test(`${name} (Cassandra)`, async (t) => {
    const keyspace = `chat_it_${randomBytes(6).toString('hex')}`;
    const contactPoints = `${cassandra.host}:${cassandra.port}`;
    t.teardown(async () => {
      const { connectCassandra, DDL_OPTIONS } = await import('../../common/cassandra/index.ts');
      const admin = connectCassandra({ contactPoints, localDataCenter: 'datacenter1' });
      await admin.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`, [], DDL_OPTIONS);
      await admin.shutdown();
    });
    const svc = await startService({ ...UNLIMITED, STORE: 'cassandra', CASSANDRA_CONTACT_POINTS: contactPoints, CASSANDRA_KEYSPACE: keyspace, ...env });
    t.teardown(() => svc.stop());
    await body(t, svc);
  });
}
