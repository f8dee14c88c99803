export type * from './types.ts';
export { LmdbControlStore } from './lmdb.ts';
