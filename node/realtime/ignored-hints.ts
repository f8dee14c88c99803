import { createHash } from 'node:crypto';
import { RecentMap } from '../../common/cache/index.ts';
import { REALTIME_LIMITS } from './limits.ts';

/**
 * A token's key in the cooldowns: 16 bytes of its SHA-256, about a microsecond for a JWT. Each
 * socket keeps its token's: a flat 22-character string (40 bytes; a slice of the whole digest's
 * text would be 32 bytes and keep that text, 64 more, alive).
 */
export const tokenKey = (token: string): string => createHash('sha256').update(token).digest().toString('base64url', 0, 16);

/**
 * A connection's standing with the connection-wide limits (WS_ACTIONS_PER_SECOND and the
 * application's APP_ACTIONS_PER_SECOND): while it is told to wait, what it sends anyway.
 */
export interface HintState {
  /** Until when (ms) the connection was told to wait; 0 when it was not. */
  coolUntil: number;
  /** When the current wait began (ms): frames within the grace after it were already on their way. */
  hintAt: number;
  /** Actions received while told to wait, past the grace, in the current wait. */
  strikes: number;
}

/**
 * The wait a connection-wide refusal asks for (seconds, to the millisecond): at least the time the
 * limit needs and `minHintSeconds`, times a random factor in [1, 2). Sockets refused in the same
 * instant by one application's budget would otherwise all come back in the same instant, a burst
 * every second that delays everyone's frames behind it; spread, they arrive as a steady trickle.
 */
export function jitteredHint(neededSeconds: number): number {
  const base = Math.max(neededSeconds, REALTIME_LIMITS.minHintSeconds);
  return Math.round(base * (1 + Math.random()) * 1000) / 1000;
}

/** Records that an action of this connection was refused by a connection-wide limit with `retryAfterSeconds`. */
export function toldToWait(h: HintState, now: number, retryAfterSeconds: number): void {
  if (now >= h.coolUntil) {
    h.hintAt = now;
    h.strikes = 0;
  }
  h.coolUntil = Math.max(h.coolUntil, now + retryAfterSeconds * 1000);
}

/**
 * Counts an incoming action; true when the connection has now ignored its hint often enough to be
 * closed. Linear in nothing: two comparisons per frame, checked before the frame is even parsed,
 * so a client that floods past its limits costs the node little until it is cut off.
 */
export function ignoresHint(h: HintState, now: number): boolean {
  if (now >= h.coolUntil) return false;
  if (now - h.hintAt < REALTIME_LIMITS.ignoredHintGraceMs) return false;
  return ++h.strikes >= REALTIME_LIMITS.ignoredHintsMax;
}

/**
 * Users whose connection was closed for ignoring rate-limit hints, refused at the upgrade on this
 * node for a while: `ignoredHintCooldownMs`, doubled for each repeat within the memory window up
 * to `ignoredHintCooldownMaxMs`. Bounded: entries are forgotten once their cooldown and the memory
 * window have passed, and past `maxEntries` the least recently started go first (by halves).
 */
export class HintCooldowns {
  private readonly byUser: RecentMap<string, { until: number; closes: number; forgetAt: number }>;
  /**
   * The same cooldowns by the hash of the token the closed socket was opened with: a reconnect
   * with that token is refused before its signature is checked, so a storm of them costs a hash
   * and a lookup each instead of a signature verification.
   */
  private readonly byToken: RecentMap<string, number>;
  private readonly timer: NodeJS.Timeout;

  constructor(maxEntries = 100_000) {
    this.byUser = new RecentMap(maxEntries);
    this.byToken = new RecentMap(maxEntries);
    this.timer = setInterval(() => this.prune(Date.now()), 10_000);
    this.timer.unref();
  }

  /** Starts (or lengthens) a user's cooldown, and its token's; returns its length in seconds. */
  start(key: string, tokenKey: string, now: number): number {
    const previous = this.byUser.get(key);
    const repeats = previous && previous.forgetAt > now ? previous.closes : 0;
    const ms = Math.min(REALTIME_LIMITS.ignoredHintCooldownMs * 2 ** repeats, REALTIME_LIMITS.ignoredHintCooldownMaxMs);
    this.byUser.set(key, { until: now + ms, closes: repeats + 1, forgetAt: now + ms + REALTIME_LIMITS.ignoredHintMemoryMs });
    this.byToken.set(tokenKey, now + ms);
    return ms / 1000;
  }

  /** Seconds left of a user's cooldown, or 0. */
  remaining(key: string, now: number): number {
    const entry = this.byUser.get(key);
    return entry && entry.until > now ? (entry.until - now) / 1000 : 0;
  }

  /** Seconds left of the cooldown of the user a token (by its hash) belongs to, or 0. */
  remainingForToken(tokenKey: string, now: number): number {
    const until = this.byToken.get(tokenKey);
    return until !== undefined && until > now ? (until - now) / 1000 : 0;
  }

  private prune(now: number): void {
    for (const [key, entry] of this.byUser.entries()) if (entry.forgetAt <= now) this.byUser.delete(key);
    for (const [key, until] of this.byToken.entries()) if (until <= now) this.byToken.delete(key);
  }

  close(): void {
    clearInterval(this.timer);
  }
}
