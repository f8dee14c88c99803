import { Redis } from 'ioredis';
import { channelOf, type Bus, type BusHandler, type BusTopic } from './bus.ts';
import { unwrap, wrap } from './envelope.ts';
import { Subscriptions } from './subscriptions.ts';

export interface RedisBusOptions {
  url: string;
  nodeId: string;
  /** Prepended to every channel, so clusters (or test runs) sharing a Redis stay apart. */
  prefix?: string;
  onError?: (error: Error) => void;
}

/**
 * The cluster transport over Redis pub/sub: one channel per chat and per user, subscribed by a
 * node only while it has local interest, so an event crosses Redis once per interested node. One
 * connection publishes and one subscribes (a subscribed Redis connection can do nothing else).
 * ioredis reconnects and re-subscribes by itself; what is published meanwhile is lost, which the
 * bus allows (clients repair gaps from history).
 */
export class RedisBus implements Bus {
  readonly nodeId: string;
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly subs = new Subscriptions();
  private readonly prefix: string;
  private closed = false;

  private constructor(options: RedisBusOptions) {
    this.nodeId = options.nodeId;
    this.prefix = options.prefix ?? '';
    const onError = options.onError ?? (() => undefined);
    // Commands wait while Redis is away instead of failing the caller; publish is fire-and-forget.
    this.pub = new Redis(options.url, { lazyConnect: true, maxRetriesPerRequest: null });
    this.sub = new Redis(options.url, { lazyConnect: true, maxRetriesPerRequest: null });
    this.pub.on('error', onError);
    this.sub.on('error', onError);
    this.sub.on('messageBuffer', (channel: Buffer, frame: Buffer) => {
      const envelope = unwrap(frame);
      if (!envelope || envelope.origin === this.nodeId) return;
      this.subs.deliver(channel.toString('utf8'), envelope.payload);
    });
  }

  static async connect(options: RedisBusOptions): Promise<RedisBus> {
    const bus = new RedisBus(options);
    await Promise.all([bus.pub.connect(), bus.sub.connect()]);
    return bus;
  }

  publish(topic: BusTopic, payload: Uint8Array): void {
    if (this.closed) return;
    this.pub.publish(channelOf(this.prefix, topic), wrap(this.nodeId, payload)).catch(() => undefined);
  }

  subscribe(topic: BusTopic, handler: BusHandler): () => void {
    const channel = channelOf(this.prefix, topic);
    const { first, remove } = this.subs.add(channel, handler);
    if (first) void this.sub.subscribe(channel).catch(() => undefined);
    return () => {
      if (remove().last && !this.closed) void this.sub.unsubscribe(channel).catch(() => undefined);
    };
  }

  /** Resolves once every subscription made so far is in place at Redis (ordering for callers and tests). */
  async ready(): Promise<void> {
    await this.sub.ping();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([this.pub.quit().catch(() => undefined), this.sub.quit().catch(() => undefined)]);
  }
}
