import { randomBytes } from 'node:crypto';
import t from 'tap';
import { connectCassandra, ensureKeyspace } from '../../common/cassandra/index.ts';
import { listenerPid } from '../../bench/lib/services.ts';
import { requireService } from '../helpers/services.ts';

/**
 * A schema statement that Cassandra answers late is waited for (DDL_OPTIONS: a minute), not failed
 * at the 12 s of other statements: a node's start runs CREATE KEYSPACE IF NOT EXISTS, and a busy
 * Cassandra flushing every table behind a schema change answered it after more than 12 s. The
 * single Cassandra is frozen (SIGSTOP) for 14 s while the statement waits. In the HA phase, which
 * runs one file at a time, nothing else uses the single Cassandra meanwhile.
 */
const cassandra = await requireService('cassandra', (line) => t.comment(line));
if (!cassandra) t.plan(0, 'cassandra is not running');
else {
  t.setTimeout(120_000);
  const pid = listenerPid(cassandra.host, cassandra.port);
  const client = connectCassandra({ contactPoints: `${cassandra.host}:${cassandra.port}`, localDataCenter: 'datacenter1' });
  const keyspace = `chat_ddl_${randomBytes(6).toString('hex')}`;
  const thaw = () => {
    try {
      if (pid !== undefined) process.kill(pid, 'SIGCONT');
    } catch {
      /* gone */
    }
  };
  process.once('exit', thaw);
  t.teardown(async () => {
    thaw();
    await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
    await client.shutdown();
  });

  t.test('CREATE KEYSPACE answered after a 14 s stall succeeds', async (t) => {
    // Without its pid nothing is frozen: the test fails here rather than signal some other process.
    if (pid === undefined) return t.fail(`no pid listens at ${cassandra.host}:${cassandra.port}`);
    await client.connect();
    process.kill(pid, 'SIGSTOP');
    const timer = setTimeout(thaw, 14_000);
    const started = Date.now();
    const outcome = await ensureKeyspace(client, keyspace, 1).then(
      () => 'created',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    clearTimeout(timer);
    thaw();
    t.equal(outcome, 'created', `after ${Math.round((Date.now() - started) / 1000)} s`);
    t.ok(Date.now() - started >= 13_000, 'it did wait out the stall');
  });
}
