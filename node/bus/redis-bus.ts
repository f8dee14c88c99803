import { Redis, type RedisOptions } from 'ioredis';
import { BackendUnavailableError } from '../../common/errors/index.ts';
import { BaseBus, type BusOptions } from './base-bus.ts';
import type { Bus } from './bus.ts';
import { errorContext, throttled } from './log.ts';

export interface RedisBusOptions extends BusOptions {
  url: string;
  /**
   * Sharded pub/sub (SPUBLISH/SSUBSCRIBE, Redis 7) instead of PUBLISH/SUBSCRIBE. On one Redis the
   * two behave alike. In a Redis Cluster classic PUBLISH is broadcast to every shard, so there
   * sharded is the mode that scales: a chat's channel lives on the one shard owning its slot.
   * (This class connects to one endpoint; driving a Cluster takes ioredis's Cluster client with
   * `shardedSubscribers`, not done yet.)
   */
  sharded?: boolean;
  /** Extra ioredis options (TLS, timeouts); the ones this class relies on are set over them. */
  redis?: RedisOptions;
}

/**
 * The cluster transport over Redis pub/sub: one channel per chat and per user (and one for
 * control), subscribed only while the node has local interest, so an event crosses Redis once per
 * interested node. Two connections: one publishes, one subscribes (a subscribed connection can do
 * nothing else).
 *
 * Reconnection is ioredis's (backoff up to 2 s). While the publisher is away, publications fail at
 * once and are counted as lost: no offline queue and no re-sending of unanswered PUBLISHes, which
 * would buffer without bound and could duplicate. The subscriber's commands do queue while it is
 * away, and on every (re)connection it subscribes again to every channel in the local table, the
 * single source of truth (ioredis's own re-subscription is off: it only knows channels whose
 * reply it saw before the drop). Ordering still holds: the queue is replayed before the re-subscription.
 */
/** How long ready() waits for Redis to answer. */
const READY_TIMEOUT_MS = 2_000;

export class RedisBus extends BaseBus implements Bus {
  private readonly pub: Redis;
  private readonly sub: Redis;
  private readonly sharded: boolean;
  /** Subscribe and unsubscribe commands not yet answered: what ready() waits for. */
  private readonly pending = new Set<Promise<unknown>>();
  private readonly warnPublish: (context: object) => void;
  private corked = false;
  private readonly warnSubscribe: (context: object) => void;

  private constructor(options: RedisBusOptions) {
    super(options);
    this.sharded = options.sharded ?? false;
    const name = `${this.prefix}bus:${this.nodeId}`.replace(/[^\w:.-]/g, '_');
    this.pub = new Redis(options.url, {
      ...options.redis,
      lazyConnect: true,
      connectionName: `${name}:pub`,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      // No auto-pipelining: ioredis drops the PUBLISHes that were unanswered when the connection
      // broke without settling them, and an auto-pipeline holding one never finished, so every
      // later publication of the node queued behind it and was never sent (after a Redis restart
      // under load, the chat's owner stopped reaching the other nodes for good).
      enableAutoPipelining: false,
    });
    this.sub = new Redis(options.url, {
      ...options.redis,
      lazyConnect: true,
      connectionName: `${name}:sub`,
      autoResubscribe: false,
      maxRetriesPerRequest: null,
    });
    this.warnPublish = throttled(this.log, 'bus: publications lost, Redis refused them');
    this.warnSubscribe = throttled(this.log, 'bus: Redis refused a subscription change');
    const warnPub = throttled(this.log, 'bus: Redis publisher connection error');
    const warnSub = throttled(this.log, 'bus: Redis subscriber connection error');
    this.pub.on('error', (error: unknown) => warnPub(errorContext(error)));
    this.sub.on('error', (error: unknown) => warnSub(errorContext(error)));
    this.sub.on(this.sharded ? 'smessageBuffer' : 'messageBuffer', (channel: Buffer, frame: Buffer) => this.receive(channel.toString('utf8'), frame));
    // 'ready' is emitted after ioredis has replayed its offline queue, so this runs last.
    this.sub.on('ready', () => this.resubscribe());
  }

  /** Connects both connections; rejects if Redis cannot be reached at start. */
  static async connect(options: RedisBusOptions): Promise<RedisBus> {
    const bus = new RedisBus(options);
    // ioredis rejects connect() with "Connection is closed."; the reason (refused, TLS, auth) came as an 'error' event before.
    let reason: unknown;
    const remember = (error: unknown) => (reason ??= error);
    bus.pub.on('error', remember);
    try {
      await Promise.all([bus.pub.connect(), bus.sub.connect()]);
    } catch (error) {
      for (const client of [bus.pub, bus.sub]) quietDisconnect(client);
      throw new BackendUnavailableError('redis', { cause: reason ?? error });
    } finally {
      bus.pub.off('error', remember);
    }
    return bus;
  }

  protected send(channel: string, frame: Buffer): void {
    // The publications of one tick leave in one write (a syscall per PUBLISH was a large share of
    // a node's CPU): the socket is corked at the first and uncorked at the end of the tick.
    const socket = this.pub.stream as { cork?: () => void; uncork?: () => void } | undefined;
    if (!this.corked && typeof socket?.cork === 'function') {
      this.corked = true;
      socket.cork();
      queueMicrotask(() => {
        this.corked = false;
        socket.uncork?.();
      });
    }
    const reply = this.sharded ? this.pub.spublish(channel, frame) : this.pub.publish(channel, frame);
    reply.then(
      (receivers) => void (this.counters.crossings += Number(receivers)),
      (error: unknown) => {
        this.counters.publishFailures++;
        this.warnPublish({ channel, ...errorContext(error) });
      },
    );
  }

  protected join(channel: string): void {
    this.track(channel, this.sharded ? this.sub.ssubscribe(channel) : this.sub.subscribe(channel));
  }

  protected leave(channel: string): void {
    this.track(channel, this.sharded ? this.sub.sunsubscribe(channel) : this.sub.unsubscribe(channel));
  }

  async ready(): Promise<void> {
    if (this.closed) return;
    if (this.pub.status !== 'ready' || this.sub.status !== 'ready') throw new BackendUnavailableError('redis');
    let timer: NodeJS.Timeout | undefined;
    let closed: (() => void) | undefined;
    try {
      // Replies come in command order: once PING answers, every earlier PUBLISH has been counted.
      // A PING written just as the connection breaks is never answered nor rejected by ioredis,
      // so the answer is awaited until either connection closes, and 2 s at most.
      const broken = new Promise<never>((_, reject) => {
        closed = () => reject(new Error('the connection to Redis closed'));
        this.pub.once('close', closed);
        this.sub.once('close', closed);
        timer = setTimeout(() => reject(new Error(`no answer from Redis within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
      });
      await Promise.race([Promise.all([...this.pending, this.pub.ping()]), broken]);
    } catch (error) {
      throw new BackendUnavailableError('redis', { cause: error });
    } finally {
      clearTimeout(timer);
      if (closed) {
        this.pub.off('close', closed);
        this.sub.off('close', closed);
      }
    }
  }

  protected async shutdown(): Promise<void> {
    // Closing the subscriber connection drops its subscriptions; no UNSUBSCRIBE needed.
    await Promise.all([this.pub, this.sub].map((redis) => (redis.status === 'ready' ? redis.quit().catch(() => redis.disconnect()) : redis.disconnect())));
  }

  private resubscribe(): void {
    const channels = this.joined();
    if (channels.length === 0 || this.closed) return;
    if (this.sharded) {
      // One per command: in a cluster, a multi-channel SSUBSCRIBE must stay within one slot.
      for (const channel of channels) this.track(channel, this.sub.ssubscribe(channel));
    } else {
      for (let i = 0; i < channels.length; i += 1000) this.track('*', this.sub.subscribe(...channels.slice(i, i + 1000)));
    }
  }

  private track(channel: string, command: Promise<unknown>): void {
    const settled = command.then(
      () => undefined,
      (error: unknown) => {
        if (!this.closed) this.warnSubscribe({ channel, ...errorContext(error) });
        throw error;
      },
    );
    this.pending.add(settled);
    settled.then(
      () => this.pending.delete(settled),
      () => this.pending.delete(settled),
    );
  }
}

/**
 * Disconnects a client that failed to connect. A TLS socket whose handshake the other side broke
 * off can still raise an error after ioredis has let go of it: with no listener, that error would
 * end the process rather than the failed start reporting its reason.
 */
export function quietDisconnect(client: Redis): void {
  (client.stream as { on?: (event: string, listener: () => void) => void } | undefined)?.on?.('error', () => undefined);
  client.disconnect();
}
