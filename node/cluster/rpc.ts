import { createHmac } from 'node:crypto';
import type { WriterId } from '../store/index.ts';

/**
 * Node-to-node calls: the owner of a chat runs the chat's operations for the other nodes. One
 * persistent TCP connection per peer, on a port of its own (never the public HTTP port), mutually
 * authenticated with the cluster key, multiplexing every call to that peer (rpc-client.ts,
 * rpc-server.ts; the wire format is in rpc-frames.ts).
 */

/** Protocol version, checked in the handshake: peers of another version do not connect. */
export const RPC_PROTOCOL_VERSION = 1;

/** The bounds of node-to-node calls (stated in the README's cluster section). */
export const RPC_LIMITS = Object.freeze({
  /** Largest frame body. A peer that announces a larger one is disconnected. */
  maxFrameBytes: 1 << 20,
  /**
   * Calls in flight on one connection, on each side. Past it the caller refuses a call at once,
   * without sending it, and the callee answers an excess call at once without running it: both
   * with OverloadedError.
   */
  maxInFlight: 2048,
  /** Bytes the callee may leave unwritten on a socket; past it it stops reading that socket until it drains. */
  maxUnwrittenBytes: 8 << 20,
  /** Time to connect and authenticate; a connection that has not completed its handshake by then is closed. */
  handshakeMs: 5_000,
  /** Default time a caller waits for an answer. */
  callTimeoutMs: 10_000,
  /** Retry hint of an OverloadedError. */
  overloadedRetrySeconds: 1,
  /** A reply larger than one frame travels in parts of this size... */
  replyPartBytes: 512 << 10,
  /** ...up to this size in all; a larger one fails on the callee. */
  maxReplyBytes: 16 << 20,
});

export type RpcLimits = { -readonly [K in keyof typeof RPC_LIMITS]: number };

/**
 * An operation a node runs for another. Resolves with its result (an ApiError as a value);
 * throws BackendUnavailableError when a backend is down; anything else it throws is a bug.
 */
export type RpcHandler = (appId: string, chatId: string, args: unknown[]) => Promise<unknown>;

/**
 * The node could not be reached, or refused the call before running it (it is leaving): nothing
 * ran there, so the call may go to another node or be tried again.
 */
export class NodeUnreachableError extends Error {
  override readonly name = 'NodeUnreachableError';
  readonly code = 'NODE_UNREACHABLE';
  constructor(
    readonly address: string,
    options?: { cause?: unknown },
  ) {
    super(`node ${address} is unreachable`, options);
  }
}

/**
 * The callee does not write the chat: another node, `holder`, does (a node's hold on a chat, see
 * ChatWriters). Nothing ran; the call may go to `holder.address`.
 */
export class HeldElsewhereError extends Error {
  override readonly name = 'HeldElsewhereError';
  constructor(readonly holder: WriterId) {
    super(`the chat is written by node ${holder.id}${holder.address ? ` at ${holder.address}` : ''}`);
  }
}

/** The key nodes authenticate each other with, derived from a user-JWT signing key they all share. */
export function clusterSecret(privateKeyPem: string): Buffer {
  return createHmac('sha256', 'chat-service cluster calls').update(privateKeyPem).digest();
}

/**
 * The cluster key: one fixed key, or the keys of the moment while the node signing key rotates.
 * The first is the one this node proves with on a new connection; a peer that proves with any of
 * them is accepted. So a new signing key that every node has loaded before it becomes the first
 * one (see KeyRing) never splits the cluster: old and new keys are both accepted in between.
 */
export type ClusterSecret = Buffer | (() => readonly Buffer[]);

/** The keys of `secret` now, the one to prove with first. */
export const secretsOf = (secret: ClusterSecret): readonly Buffer[] => (Buffer.isBuffer(secret) ? [secret] : secret());

/** `host:port` (`[v6]:port` for IPv6), or undefined when it is not one. */
export function parseAddress(address: string): { host: string; port: number } | undefined {
  const colon = address.lastIndexOf(':');
  if (colon <= 0) return undefined;
  let host = address.slice(0, colon);
  const port = Number(address.slice(colon + 1));
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  else if (host.includes(':')) return undefined;
  if (!host || !Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { host, port };
}

/** The address other nodes dial: the configured one, or HOST:port (loopback for a wildcard HOST). */
export function rpcAddress(configured: string, host: string, port: number): string {
  if (configured) return configured;
  const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return reachable.includes(':') ? `[${reachable}]:${port}` : `${reachable}:${port}`;
}
