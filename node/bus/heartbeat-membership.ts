import type { Leases } from './leases.ts';
import { errorContext, stderrLogger, throttled, type BusLogger } from './log.ts';
import type { Membership, MembershipListener, NodeDetails, NodeInfo } from './membership.ts';

export interface MembershipOptions {
  /** How long a node stays live without a heartbeat: how fast a dead node's chats move. */
  ttlMs?: number;
  /** How often a joined node renews its entry; well under ttlMs. */
  heartbeatMs?: number;
  /** How often the live list is read for onChange listeners; bounds how late a join is noticed. */
  pollMs?: number;
  log?: BusLogger;
}

export const MEMBERSHIP_DEFAULTS = { ttlMs: 3_000, heartbeatMs: 1_000, pollMs: 1_000 } as const;

const KEY = 'nodes';

/**
 * Membership over leases: one lease set for the cluster, one member per node, its NodeInfo as the
 * value. This class owns heartbeats, polling and change detection; the Leases store is the
 * transport. Polling rather than keyspace notifications: expiry of a member inside a set raises no
 * notification, and a read of a handful of nodes a second costs nothing.
 */
export class HeartbeatMembership implements Membership {
  private readonly ttlMs: number;
  private readonly heartbeatMs: number;
  private readonly listeners = new Set<MembershipListener>();
  /** Listeners added since the last read: they hear the next list even if it has not changed. */
  private readonly fresh = new Set<MembershipListener>();
  private readonly poller: NodeJS.Timeout;
  private readonly log: BusLogger;
  private readonly warnBeat: (context: object) => void;
  private readonly warnPoll: (context: object) => void;
  private readonly warnEntry: (context: object) => void;
  private self: { info: NodeInfo; timer: NodeJS.Timeout } | undefined;
  private beating = false;
  /** Last live ids reported to listeners, joined; undefined before the first report. */
  private reported: string | undefined;
  /** Refreshes run one after another, so listeners hear changes in order. */
  private refreshing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly leases: Leases,
    options: MembershipOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? MEMBERSHIP_DEFAULTS.ttlMs;
    this.heartbeatMs = options.heartbeatMs ?? Math.min(MEMBERSHIP_DEFAULTS.heartbeatMs, this.ttlMs / 3);
    if (!(this.heartbeatMs > 0 && this.heartbeatMs < this.ttlMs)) throw new RangeError('membership heartbeatMs must be positive and below ttlMs');
    this.log = options.log ?? stderrLogger;
    this.warnBeat = throttled(this.log, 'membership: heartbeat failed; this node drops out of the live list unless a later beat succeeds');
    this.warnPoll = throttled(this.log, 'membership: reading the live node list failed; keeping the last one');
    this.warnEntry = throttled(this.log, 'membership: ignoring a node entry of an unknown shape');
    this.poller = setInterval(() => {
      if (this.listeners.size > 0) void this.refresh();
    }, options.pollMs ?? MEMBERSHIP_DEFAULTS.pollMs);
    this.poller.unref();
  }

  async join(nodeId: string, details: NodeDetails): Promise<void> {
    if (this.closed) throw new Error('membership is closed');
    if (this.self) throw new Error(`already joined as ${this.self.info.nodeId}`);
    const info: NodeInfo = { nodeId, url: details.url, rpc: details.rpc, version: details.version, joinedAt: new Date().toISOString() };
    const timer = setInterval(() => this.beat(), this.heartbeatMs);
    timer.unref();
    this.self = { info, timer };
    await this.leases.renew(KEY, [{ member: nodeId, value: JSON.stringify(info) }], this.ttlMs);
    await this.refresh();
  }

  async live(): Promise<NodeInfo[]> {
    const nodes: NodeInfo[] = [];
    for (const { member, value } of await this.leases.live(KEY)) {
      const info = parseInfo(member, value);
      if (info) nodes.push(info);
      else this.warnEntry({ nodeId: member });
    }
    return nodes;
  }

  onChange(listener: MembershipListener): () => void {
    this.listeners.add(listener);
    this.fresh.add(listener);
    // Reported by the next read, in line with every other report, so it can never overtake one.
    if (!this.closed) void this.refresh();
    return () => {
      this.listeners.delete(listener);
      this.fresh.delete(listener);
    };
  }

  refresh(): Promise<void> {
    this.refreshing = this.refreshing.then(() => this.poll());
    return this.refreshing;
  }

  async leave(): Promise<void> {
    const self = this.self;
    if (!self) return;
    this.self = undefined;
    clearInterval(self.timer);
    try {
      await this.leases.remove(KEY, [self.info.nodeId]);
    } catch (error) {
      // The entry then expires within one TTL.
      this.warnBeat(errorContext(error));
    }
    if (!this.closed) await this.refresh();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.poller);
    await this.leave();
    await this.refreshing;
    this.listeners.clear();
  }

  private beat(): void {
    const self = this.self;
    if (!self || this.beating) return;
    this.beating = true;
    this.leases
      .renew(KEY, [{ member: self.info.nodeId, value: JSON.stringify(self.info) }], this.ttlMs)
      .catch((error: unknown) => this.warnBeat(errorContext(error)))
      .finally(() => (this.beating = false));
  }

  private async poll(): Promise<void> {
    if (this.closed) return;
    let nodes: NodeInfo[];
    try {
      nodes = await this.live();
    } catch (error) {
      this.warnPoll(errorContext(error));
      return;
    }
    const ids = nodes.map((n) => n.nodeId).join('\n');
    const changed = ids !== this.reported;
    this.reported = ids;
    const told = changed ? [...this.listeners] : [...this.fresh];
    this.fresh.clear();
    for (const listener of told) {
      try {
        listener(nodes);
      } catch (error) {
        this.log.warn(errorContext(error), 'membership: a change listener threw');
      }
    }
  }
}

function parseInfo(nodeId: string, value: string): NodeInfo | undefined {
  try {
    const v = JSON.parse(value) as Partial<Record<keyof NodeInfo, unknown>>;
    // An entry without `rpc` is a node of a version that forwards over HTTP: it cannot take calls.
    if (v.nodeId !== nodeId || typeof v.url !== 'string' || typeof v.rpc !== 'string' || typeof v.version !== 'string' || typeof v.joinedAt !== 'string') return undefined;
    return { nodeId, url: v.url, rpc: v.rpc, version: v.version, joinedAt: v.joinedAt };
  } catch {
    return undefined;
  }
}
