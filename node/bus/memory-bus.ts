import { channelOf, type Bus, type BusHandler, type BusTopic } from './bus.ts';
import { unwrap, wrap } from './envelope.ts';
import { Subscriptions } from './subscriptions.ts';

/**
 * The in-process transport: what Redis is to a cluster, for nodes in one process (the standalone
 * deployment, and tests of multi-node behaviour). Delivery is asynchronous, like a network's.
 */
export class MemoryBroker {
  private readonly members = new Map<string, Set<MemoryBus>>();
  /** Publications that crossed the broker, by channel: what a test counts to check interest. */
  readonly crossings = new Map<string, number>();

  join(channel: string, bus: MemoryBus): void {
    let set = this.members.get(channel);
    if (!set) this.members.set(channel, (set = new Set()));
    set.add(bus);
  }

  leave(channel: string, bus: MemoryBus): void {
    const set = this.members.get(channel);
    set?.delete(bus);
    if (set?.size === 0) this.members.delete(channel);
  }

  subscribers(channel: string): number {
    return this.members.get(channel)?.size ?? 0;
  }

  publish(channel: string, frame: Buffer): void {
    for (const bus of this.members.get(channel) ?? []) {
      this.crossings.set(channel, (this.crossings.get(channel) ?? 0) + 1);
      queueMicrotask(() => bus.receive(channel, frame));
    }
  }
}

export class MemoryBus implements Bus {
  private readonly subs = new Subscriptions();
  private closed = false;

  constructor(
    private readonly broker: MemoryBroker,
    readonly nodeId: string,
    private readonly prefix = '',
  ) {}

  publish(topic: BusTopic, payload: Uint8Array): void {
    if (this.closed) return;
    this.broker.publish(channelOf(this.prefix, topic), wrap(this.nodeId, payload));
  }

  subscribe(topic: BusTopic, handler: BusHandler): () => void {
    const channel = channelOf(this.prefix, topic);
    const { first, remove } = this.subs.add(channel, handler);
    if (first) this.broker.join(channel, this);
    return () => {
      if (remove().last) this.broker.leave(channel, this);
    };
  }

  async ready(): Promise<void> {
    // Joining the broker is synchronous.
  }

  /** Called by the broker. */
  receive(channel: string, frame: Buffer): void {
    const envelope = unwrap(frame);
    if (this.closed || !envelope || envelope.origin === this.nodeId) return;
    this.subs.deliver(channel, envelope.payload);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const channel of this.subs.channels()) this.broker.leave(channel, this);
  }
}
