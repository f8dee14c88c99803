/**
 * A node among others: chat placement over the live node list, forwarding of chat operations to
 * their owner, and events to and from the other nodes over the bus.
 */
export { ClusterEvents } from './cluster-events.ts';
export { ChatPlacement, ClusterRouter, type ClusterRouterOptions } from './placement.ts';
export { attachRpc, callNode, clusterSecret, NodeUnreachableError, RPC_PATH } from './rpc.ts';
