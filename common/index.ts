/**
 * Plumbing shared by the control service and the cluster nodes. Each sub-folder has its own
 * index; this file re-exports what the services use.
 */
export * from './errors/index.ts';
export * from './http/index.ts';
export * from './config/index.ts';
export * from './jwt/index.ts';
export * from './log/index.ts';
export * from './limits/index.ts';
export * from './ops/index.ts';
export * from './api-keys/index.ts';
export * from './files/index.ts';
