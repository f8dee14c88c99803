export { CachedReads } from './cached-reads.ts';
export { RecentMap, RecentSet } from './recent.ts';
