export { CachedReads } from './cached-reads.ts';
