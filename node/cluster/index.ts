/**
 * A node among others: chat placement over the live node list, forwarding of chat operations to
 * their owner over node-to-node connections, and events to and from the other nodes over the bus.
 */
export { ClusterEvents } from './cluster-events.ts';
export { ChatPlacement, ClusterRouter, type ClusterRouterOptions } from './placement.ts';
export { clusterSecret, secretsOf, HeldElsewhereError, NodeUnreachableError, parseAddress, RPC_LIMITS, RPC_PROTOCOL_VERSION, rpcAddress, type ClusterSecret, type RpcHandler, type RpcLimits } from './rpc.ts';
export { RpcClient, type RpcCallOptions, type RpcCaller, type RpcClientOptions } from './rpc-client.ts';
export { RpcServer, type RpcServerOptions } from './rpc-server.ts';
/** The wire format and the handshake's proofs, for tests that speak the protocol by hand. */
export { decodeMessage, encodeFrame, FrameReader, type RpcMessage } from './rpc-frames.ts';
export { newNonce, proof } from './rpc-handshake.ts';
