/**
 * The cluster bus: routing events between nodes, presence of users across nodes, membership of
 * nodes, and placement of chats on nodes. Each backend-facing concept is an interface with an
 * in-memory implementation (standalone, and multi-node tests in one process) and a Redis one.
 */
export { channelOf, type Bus, type BusHandler, type BusPayload, type BusStats, type BusTopic } from './bus.ts';
export { BUS_PROTOCOL_VERSION, decodeEnvelope, encodeEnvelope, type Envelope } from './envelope.ts';
export { CONTROL_PROTOCOL_VERSION, decodeControl, encodeControl, type ControlMessage } from './control.ts';
export type { BusOptions } from './base-bus.ts';
export { MemoryBroker, MemoryBus } from './memory-bus.ts';
export { RedisBus, type RedisBusOptions } from './redis-bus.ts';
export { clusterNodeOptions, parseRedisNodes, type RedisNodeAddress } from './redis-clients.ts';
export type { Lease, LeaseCounts, Leases } from './leases.ts';
export { MemoryLeases } from './memory-leases.ts';
export { RedisLeases, type RedisLeasesOptions } from './redis-leases.ts';
export type { Presence } from './presence.ts';
export { HeartbeatPresence, PRESENCE_DEFAULTS, type PresenceOptions } from './heartbeat-presence.ts';
export type { Membership, MembershipListener, NodeDetails, NodeInfo } from './membership.ts';
export { HeartbeatMembership, MEMBERSHIP_DEFAULTS, type MembershipOptions } from './heartbeat-membership.ts';
export { ownerOf } from './placement.ts';
export { throttled, type BusLogger } from './log.ts';
