import { createLogger, loadConfigOrExit } from '../common/index.ts';
import { prepareCassandra } from './stores.ts';

const HELP = `Usage: npm run schema

Creates the Cassandra/ScyllaDB keyspace (SimpleStrategy, CASSANDRA_REPLICATION_FACTOR) and every
table of the control service and the nodes, or applies the migrations it lacks. Safe to run again:
applied migrations are recorded in <keyspace>.schema_migrations. The service runs the same step at
start when STORE=cassandra.

Reads CASSANDRA_CONTACT_POINTS, CASSANDRA_LOCAL_DC, CASSANDRA_KEYSPACE and
CASSANDRA_REPLICATION_FACTOR (see README.md, "Configuration").
Exit codes: 0 done, 1 Cassandra unreachable or a statement failed, 2 configuration error.
`;

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}

const config = loadConfigOrExit(process.env);
const log = createLogger(config.LOG_LEVEL, 'schema');
try {
  const { client, applied } = await prepareCassandra(config);
  log.info({ keyspace: config.CASSANDRA_KEYSPACE, applied }, applied.length ? `applied ${applied.join(', ')}` : 'schema up to date');
  await client.shutdown();
} catch (error) {
  log.error({ err: error instanceof Error ? error.message : String(error) }, 'schema failed');
  process.exitCode = 1;
}
