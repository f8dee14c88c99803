export type * from './types.ts';
export { CLUSTER_STATUSES, TIERS } from './types.ts';
export { LmdbControlStore } from './lmdb/index.ts';
export { CassandraControlStore, controlMigrations } from './cassandra/index.ts';
