/** The control service: accounts, sessions, applications, API keys and the cluster registry. */
export { createControlService, CONTROL_VERSION, type ControlService, type ControlServiceOptions } from './service.ts';
export { CassandraControlStore, controlMigrations, LmdbControlStore } from './store/index.ts';
export type * from './store/types.ts';
export { LIMITS } from './context.ts';
export { ACCESS_TOKEN_TTL_SECONDS } from './auth/tokens.ts';
