export { applied, asUnavailable, claimRow, connectCassandra, cql, DDL_OPTIONS, responseCode, STATEMENT_OPTIONS, timedOut, type BatchStatement, type CassandraClient, type CassandraOptions, type Cql } from './client.ts';
export { ensureKeyspace, migrate, type Migration } from './schema.ts';
export { defined, num, opt, str } from './rows.ts';
export { CassandraSigningKeys } from './signing-keys.ts';
