import { BaseBus, type BusOptions } from './base-bus.ts';
import type { Bus } from './bus.ts';

type Sink = (channel: string, frame: Buffer) => void;

/**
 * The in-process transport: what Redis is to a cluster, for buses in one process (the standalone
 * deployment, and multi-node tests in one process). Frames are delivered in a later microtask,
 * like a network's, never inside publish(); microtasks run in order, so per-publisher order holds.
 */
export class MemoryBroker {
  private readonly members = new Map<string, Set<Sink>>();
  /** While false, publications are refused: a test's switch for "the transport is down". */
  up = true;

  join(channel: string, sink: Sink): void {
    let set = this.members.get(channel);
    if (!set) this.members.set(channel, (set = new Set()));
    set.add(sink);
  }

  leave(channel: string, sink: Sink): void {
    const set = this.members.get(channel);
    if (!set?.delete(sink) || set.size > 0) return;
    this.members.delete(channel);
  }

  /** How many buses are subscribed to a channel (Redis: PUBSUB NUMSUB). */
  subscribers(channel: string): number {
    return this.members.get(channel)?.size ?? 0;
  }

  /** Delivers a frame to every subscribed bus; returns how many (Redis: PUBLISH's reply), or -1 when down. */
  publish(channel: string, frame: Buffer): number {
    if (!this.up) return -1;
    const set = this.members.get(channel);
    if (!set) return 0;
    for (const sink of set) queueMicrotask(() => sink(channel, frame));
    return set.size;
  }
}

/** A bus over a MemoryBroker; several in one process, sharing a broker, behave as a cluster. */
export class MemoryBus extends BaseBus implements Bus {
  private readonly sink: Sink = (channel, frame) => this.receive(channel, frame);

  constructor(
    private readonly broker: MemoryBroker,
    options: BusOptions,
  ) {
    super(options);
  }

  protected send(channel: string, frame: Buffer): void {
    const receivers = this.broker.publish(channel, frame);
    if (receivers < 0) this.counters.publishFailures++;
    else this.counters.crossings += receivers;
  }

  protected join(channel: string): void {
    this.broker.join(channel, this.sink);
  }

  protected leave(channel: string): void {
    this.broker.leave(channel, this.sink);
  }

  async ready(): Promise<void> {
    // Joining and leaving the broker take effect at once; a publication is handed over in publish().
  }

  protected async shutdown(channels: string[]): Promise<void> {
    for (const channel of channels) this.broker.leave(channel, this.sink);
  }
}
