export { applied, claimRow, connectCassandra, type CassandraClient, type CassandraOptions } from './client.ts';
export { ensureKeyspace, migrate, type Migration } from './schema.ts';
export { defined, num, opt, str } from './rows.ts';
