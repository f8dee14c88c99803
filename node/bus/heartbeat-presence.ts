import type { Leases } from './leases.ts';
import { errorContext, stderrLogger, throttled, type BusLogger } from './log.ts';
import type { Presence } from './presence.ts';

export interface PresenceOptions {
  /** How long a connection stays live without a heartbeat; bounds how late a dead node's users go offline. */
  ttlMs?: number;
  /** How often this node renews its connections; well under ttlMs, so one slow beat is not an expiry. */
  heartbeatMs?: number;
  log?: BusLogger;
}

export const PRESENCE_DEFAULTS = { ttlMs: 30_000, heartbeatMs: 10_000 } as const;

const keyOf = (appId: string, userId: string) => `p:${appId}:${userId}`;
const memberOf = (nodeId: string, connId: string) => `${nodeId}/${connId}`;

/**
 * Presence over leases: one lease set per user, one member per connection. This class owns the
 * cluster logic (which connections this node holds, the heartbeat, the transitions); the Leases
 * store is the transport (MemoryLeases standalone, RedisLeases in a cluster).
 *
 * A heartbeat issues every renewal in one tick, after taking its snapshot, and the store applies
 * calls in order; so an offline() made after a beat's snapshot reaches the store after that
 * beat's renewal, and a beat never resurrects a connection that went offline.
 */
export class HeartbeatPresence implements Presence {
  private readonly ttlMs: number;
  /** This node's live connections: user key → members. */
  private readonly local = new Map<string, Set<string>>();
  private readonly timer: NodeJS.Timeout;
  private readonly warn: (context: object) => void;
  private beating = false;
  private closed = false;

  constructor(
    private readonly leases: Leases,
    options: PresenceOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? PRESENCE_DEFAULTS.ttlMs;
    const heartbeatMs = options.heartbeatMs ?? Math.min(PRESENCE_DEFAULTS.heartbeatMs, this.ttlMs / 3);
    if (!(heartbeatMs > 0 && heartbeatMs < this.ttlMs)) throw new RangeError('presence heartbeatMs must be positive and below ttlMs');
    this.warn = throttled(options.log ?? stderrLogger, 'presence: heartbeat failed; connections expire unless a later beat succeeds');
    this.timer = setInterval(() => this.beat(), heartbeatMs);
    // Presence alone must not keep a process alive.
    this.timer.unref();
  }

  async online(appId: string, userId: string, nodeId: string, connId: string): Promise<boolean> {
    if (this.closed) throw new Error('presence is closed');
    // Tracked before the write: if the write fails, the next beat registers the connection.
    const key = keyOf(appId, userId);
    const member = memberOf(nodeId, connId);
    let set = this.local.get(key);
    if (!set) this.local.set(key, (set = new Set()));
    set.add(member);
    const { before, after } = await this.leases.renew(key, [{ member, value: '' }], this.ttlMs);
    return before === 0 && after > 0;
  }

  async offline(appId: string, userId: string, nodeId: string, connId: string): Promise<boolean> {
    const key = keyOf(appId, userId);
    const member = memberOf(nodeId, connId);
    const set = this.local.get(key);
    set?.delete(member);
    if (set?.size === 0) this.local.delete(key);
    const { before, after } = await this.leases.remove(key, [member]);
    return before > 0 && after === 0;
  }

  async isOnline(appId: string, userId: string): Promise<boolean> {
    return (await this.leases.count(keyOf(appId, userId))) > 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    const local = [...this.local];
    this.local.clear();
    const results = await Promise.allSettled(local.map(([key, members]) => this.leases.remove(key, [...members])));
    // Not fatal: whatever could not be removed expires within one TTL.
    for (const r of results) if (r.status === 'rejected') this.warn(errorContext(r.reason));
  }

  private beat(): void {
    // A beat still waiting on a slow store is not doubled; the next tick tries again.
    if (this.beating || this.closed || this.local.size === 0) return;
    this.beating = true;
    const renewals = [...this.local].map(([key, members]) =>
      this.leases.renew(
        key,
        [...members].map((member) => ({ member, value: '' })),
        this.ttlMs,
      ),
    );
    void Promise.allSettled(renewals).then((results) => {
      this.beating = false;
      const failed = results.filter((r) => r.status === 'rejected');
      if (failed.length > 0) this.warn({ failed: failed.length, of: results.length, ...errorContext(failed[0]!.reason) });
    });
  }
}
