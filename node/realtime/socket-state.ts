import type { Connection } from './hub.ts';
import type { Encoding } from './frames.ts';
import type { HintState } from './ignored-hints.ts';
import type { ResumePoint } from './resume.ts';

/**
 * What the gateway keeps per socket, on top of the hub's fields: 15 own properties in all, the
 * most that keep a uWS socket's properties fast (see Connection). An idle socket holds no object
 * of its own besides its properties array: what only some sockets need (a sender's limits, resume
 * points, frames sent early) is made when it is first needed and dropped when done, and every
 * number in it is a small integer (a time in milliseconds would be a boxed double each).
 */
export interface SocketState extends Connection {
  /** A number from nextConnection(): the id is made from it (connectionId). */
  connId: number;
  /** The JWT's expiry, in seconds (its `exp`): the socket lives no longer than the token it was opened with. */
  expiresAt: number;
  /** The hash of the JWT the socket was opened with (see HintCooldowns). */
  tokenKey: string;
  /** Past the admission check: counted in the hub and in presence (so its close is too). */
  admitted: boolean;
  /** From the socket's first action on: its token bucket and its standing with the hints. */
  sender: Sender | undefined;
  /** The chats named in the connect URL's `resume`, until the replay of them starts; undefined when none. */
  resume: Map<string, ResumePoint> | undefined;
  /** Frames received before the admission check answered, taken in order once admitted; undefined when none. */
  early: { data: ArrayBuffer; isBinary: boolean }[] | undefined;
}

/** The limits of a socket that sent an action: WS_ACTIONS_PER_SECOND's bucket, and the hints (ignored-hints.ts). */
export interface Sender extends HintState {
  tokens: number;
  refilledAt: number;
}

/**
 * A socket's state as the upgrade hands it to uWS: every field present, so all sockets share one
 * shape. `sibling`, an open socket of the same user, lends its strings: the ids always, the token's
 * hash when the token is the same (a client's tabs), so a user's sockets hold one copy of each.
 */
export function socketState(
  principal: { appId: string; userId: string; /** ms */ expiresAt: number },
  s: { connId: number; encoding: Encoding; tokenKey: string; resume: Map<string, ResumePoint> | undefined },
  sibling?: SocketState,
): SocketState {
  return {
    appId: sibling?.appId ?? principal.appId,
    userId: sibling?.userId ?? principal.userId,
    connId: s.connId,
    encoding: s.encoding,
    chats: undefined,
    threads: undefined,
    joined: false,
    closed: false,
    slow: false,
    expiresAt: Math.floor(principal.expiresAt / 1000),
    tokenKey: sibling?.tokenKey === s.tokenKey ? sibling.tokenKey : s.tokenKey,
    admitted: false,
    sender: undefined,
    resume: s.resume,
    early: undefined,
  };
}

/**
 * The socket's limits, made with its first action: a full bucket (what one made full when the
 * socket opened would hold by then) and no hint given.
 */
export function senderOf(c: SocketState, perSecond: number, now: number): Sender {
  return (c.sender ??= { tokens: perSecond * 2, refilledAt: now, coolUntil: 0, hintAt: 0, strikes: 0 });
}

/** Takes one action from the bucket: `perSecond` sustained, bursts of twice that. */
export function takeToken(s: Sender, perSecond: number, now: number): boolean {
  s.tokens = Math.min(perSecond * 2, s.tokens + ((now - s.refilledAt) / 1000) * perSecond);
  s.refilledAt = now;
  if (s.tokens < 1) return false;
  s.tokens -= 1;
  return true;
}
