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
/** An application's users online: one member per (node, user), so counting them needs no scan of users. */
const appKeyOf = (appId: string) => `pa:${appId}`;

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
  /** This node's users with a live connection, per application: user → the node id it was announced under. */
  private readonly localApps = new Map<string, Map<string, string>>();
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
    let users = this.localApps.get(appId);
    if (!users) this.localApps.set(appId, (users = new Map()));
    const first = !users.has(userId);
    users.set(userId, nodeId);
    const [{ before, after }] = await Promise.all([
      this.leases.renew(key, [{ member, value: '' }], this.ttlMs),
      first ? this.leases.renew(appKeyOf(appId), [{ member: `${nodeId}/${userId}`, value: '' }], this.ttlMs) : undefined,
    ]);
    return before === 0 && after > 0;
  }

  async offline(appId: string, userId: string, nodeId: string, connId: string): Promise<boolean> {
    const key = keyOf(appId, userId);
    const member = memberOf(nodeId, connId);
    const set = this.local.get(key);
    set?.delete(member);
    let lastHere = false;
    if (set?.size === 0) {
      this.local.delete(key);
      const users = this.localApps.get(appId);
      lastHere = users?.delete(userId) ?? false;
      if (users?.size === 0) this.localApps.delete(appId);
    }
    const [{ before, after }] = await Promise.all([
      this.leases.remove(key, [member]),
      lastHere ? this.leases.remove(appKeyOf(appId), [`${nodeId}/${userId}`]) : undefined,
    ]);
    return before > 0 && after === 0;
  }

  async isOnline(appId: string, userId: string): Promise<boolean> {
    return (await this.leases.count(keyOf(appId, userId))) > 0;
  }

  async usersOnline(appId: string): Promise<ReadonlySet<string>> {
    return new Set((await this.leases.live(appKeyOf(appId))).map((l) => l.member.slice(l.member.indexOf('/') + 1)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    const local = [...this.local];
    const apps = [...this.localApps];
    this.local.clear();
    this.localApps.clear();
    const results = await Promise.allSettled([
      ...local.map(([key, members]) => this.leases.remove(key, [...members])),
      ...apps.map(([appId, users]) => this.leases.remove(appKeyOf(appId), [...users].map(([userId, nodeId]) => `${nodeId}/${userId}`))),
    ]);
    // Not fatal: whatever could not be removed expires within one TTL.
    for (const r of results) if (r.status === 'rejected') this.warn(errorContext(r.reason));
  }

  private beat(): void {
    // A beat still waiting on a slow store is not doubled; the next tick tries again.
    if (this.beating || this.closed || this.local.size === 0) return;
    this.beating = true;
    const renewals = [
      ...[...this.local].map(([key, members]) =>
        this.leases.renew(
          key,
          [...members].map((member) => ({ member, value: '' })),
          this.ttlMs,
        ),
      ),
      ...[...this.localApps].map(([appId, users]) =>
        this.leases.renew(
          appKeyOf(appId),
          [...users].map(([userId, nodeId]) => ({ member: `${nodeId}/${userId}`, value: '' })),
          this.ttlMs,
        ),
      ),
    ];
    void Promise.allSettled(renewals).then((results) => {
      this.beating = false;
      const failed = results.filter((r) => r.status === 'rejected');
      if (failed.length > 0) this.warn({ failed: failed.length, of: results.length, ...errorContext(failed[0]!.reason) });
    });
  }
}
