/** A cluster node: chat users, chats, messages and realtime delivery. */
export { createNodeService, NODE_VERSION, type NodeCluster, type NodeService, type NodeServiceOptions } from './service.ts';
export { CassandraNodeStore, LmdbNodeStore, nodeMigrations } from './store/index.ts';
export type * from './store/types.ts';
