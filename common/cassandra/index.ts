export { applied, asUnavailable, CAS_TIMEOUT_MS, claimRow, connectCassandra, cql, DDL_OPTIONS, responseCode, SPECULATIVE_DELAY_MS, STATEMENT_OPTIONS, timedOut, type BatchStatement, type CassandraClient, type CassandraOptions, type Cql } from './client.ts';
export { ensureKeyspace, migrate, type Migration } from './schema.ts';
export { dataOf, dataText, defined, num, opt, str } from './rows.ts';
export { CassandraSigningKeys } from './signing-keys.ts';
