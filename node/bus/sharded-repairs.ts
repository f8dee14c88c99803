import type { Cluster } from 'ioredis';
import { withDeadline } from './redis-clients.ts';

/** How long a subscription command may go unanswered before it counts as failed. */
const COMMAND_TIMEOUT_MS = 5_000;
/** How long after a failure its channel is repaired. */
const REPAIR_DELAY_MS = 1_000;

export interface ShardedRepairsOptions {
  /** The subscriber client (`shardedSubscribers: true`). */
  sub: Cluster;
  /** Whether the bus has a local handler for the channel: the local table, the source of truth. */
  wanted: (channel: string) => boolean;
  /** Registers a command with the bus (what ready() waits for); the returned promise settles with it. */
  track: (channel: string, command: Promise<unknown>) => Promise<unknown>;
}

/**
 * Sends a bus's SSUBSCRIBE and SUNSUBSCRIBE on a Redis Cluster, and repairs a channel whose
 * command failed, so ioredis's table of sharded subscriptions ends as the bus's local table says.
 *
 * ioredis records a channel in its table (by slot) when it routes the command, before any answer,
 * and re-subscribes from that table after every change of the slot map; so a channel whose command
 * failed on a dead master comes back with the promoted replica without us. But a command can also
 * fail before ioredis records it (no subscriber for the slot yet, or the call throws), and an
 * SSUBSCRIBE answered with MOVED is never settled by ioredis (5.11). So a command that is refused,
 * throws, or goes unanswered for 5 s marks its channel, and 1 s later, while the cluster client is
 * ready (else on its next 'ready'), the channel is repaired: SUNSUBSCRIBE, which removes every copy
 * ioredis holds, then SSUBSCRIBE if the bus still has a handler for it. A repair that fails is
 * repaired again; ioredis's table holds at most one copy of a repaired channel, however often.
 * Repairing an intact subscription costs a moment of missed publications, which the bus allows
 * (at most once); it never duplicates one (Redis sends one copy per subscribed connection).
 */
export class ShardedRepairs {
  private readonly failed = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: ShardedRepairsOptions) {}

  /** Subscribes (true) or unsubscribes the bus's subscriber connections from `channel`. */
  send(channel: string, subscribe: boolean): void {
    const { sub } = this.options;
    this.watch(channel, () => (subscribe ? sub.ssubscribe(channel) : sub.sunsubscribe(channel)));
  }

  /** Channels wait for repair: the bus's subscriptions are not all in effect. */
  outstanding(): boolean {
    return this.failed.size > 0;
  }

  /** Repairs every marked channel now, if the cluster client is ready. */
  run(): void {
    const { sub, wanted } = this.options;
    if (this.stopped || sub.status !== 'ready' || this.failed.size === 0) return;
    const channels = [...this.failed];
    this.failed.clear();
    for (const channel of channels) {
      this.watch(channel, () => sub.sunsubscribe(channel));
      if (wanted(channel)) this.watch(channel, () => sub.ssubscribe(channel));
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.failed.clear();
  }

  private watch(channel: string, send: () => Promise<unknown>): void {
    let command: Promise<unknown>;
    try {
      command = send();
    } catch (error) {
      // ioredis can throw while routing (a slot missing from its map): a failure like any other.
      command = Promise.reject(error);
    }
    this.options.track(channel, withDeadline(command, COMMAND_TIMEOUT_MS)).catch(() => this.fail(channel));
  }

  private fail(channel: string): void {
    if (this.stopped) return;
    this.failed.add(channel);
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.run();
    }, REPAIR_DELAY_MS);
    this.timer.unref();
  }
}
