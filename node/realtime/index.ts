/**
 * Realtime: the WebSocket gateway (authentication, the actions a socket may send, its limits and
 * its resume), the hub that hands each event to the sockets of a chat or a user (encoded once per
 * wire encoding, fanned out by uWS topics), and the protocol's frames (PROTOCOL.md is rendered from
 * them). Events reach sockets in the order the hub is given them.
 */
export { attachGateway, type GatewayDeps, type GatewayMetrics } from './gateway.ts';
export { RealtimeHub, type HubInterest } from './hub.ts';
export { ackFrame, eventFrame } from './frames.ts';
export { LocalReplays, ReplayWaiters, type Replays, type ReplayWaiter } from './replays.ts';
export { Admission } from './admission.ts';
export { closeCodes, PROTOCOL_VERSION, type CloseName } from './protocol.ts';
export { renderProtocolDoc } from './protocol-doc.ts';
