import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { BackendUnavailableError } from '../../common/errors/index.ts';
import { BaseBus, type BusOptions } from './base-bus.ts';
import type { Bus } from './bus.ts';
import { errorContext, throttled } from './log.ts';
import { clusterNodeOptions, clusterStartError, connectNodesAhead, quietDisconnect, readyNodes, refuseClusterNode, withDeadline, type RedisNodeAddress } from './redis-clients.ts';
import { ShardedRepairs } from './sharded-repairs.ts';

export interface RedisBusOptions extends BusOptions {
  /** The Redis; with `cluster`, only its user name, password and TLS (rediss://) are used. */
  url: string;
  /**
   * Seed nodes of a Redis Cluster: when given, the bus runs on the cluster (ioredis's Cluster
   * client), always with sharded pub/sub, instead of on the one Redis at `url`.
   */
  cluster?: readonly RedisNodeAddress[];
  /**
   * Sharded pub/sub (SPUBLISH/SSUBSCRIBE, Redis 7) instead of PUBLISH/SUBSCRIBE. On one Redis the
   * two behave alike. In a Redis Cluster classic PUBLISH is broadcast to every shard, so there
   * sharded is the mode that scales (a chat's channel lives on the one shard owning its slot), and
   * the only one used.
   */
  sharded?: boolean;
  /** Extra ioredis options (TLS, timeouts); the ones this class relies on are set over them. */
  redis?: RedisOptions;
}

/** How long ready() waits for Redis to answer. */
const READY_TIMEOUT_MS = 2_000;
/** The least time between two reads of a cluster's slot map by the publisher. */
const SLOT_REFRESH_MS = 250;

/**
 * The cluster transport over Redis pub/sub: one channel per chat and per user (and one for
 * control), subscribed only while the node has local interest, so an event crosses Redis once per
 * interested node. Two clients: one publishes, one subscribes (a subscribed connection can do
 * nothing else).
 *
 * On one Redis, reconnection is ioredis's (backoff up to 2 s). While the publisher is away,
 * publications fail at once and are counted as lost: no offline queue and no re-sending of
 * unanswered PUBLISHes, which would buffer without bound and could duplicate. The subscriber's
 * commands do queue while it is away, and on every (re)connection it subscribes again to every
 * channel in the local table, the single source of truth (ioredis's own re-subscription is off:
 * it only knows channels whose reply it saw before the drop). Ordering still holds: the queue is
 * replayed before the re-subscription.
 *
 * On a Redis Cluster every channel is sharded, the control channel too: PUBLISH is routed to any
 * node, so two control messages of one node could reach the others in either order, and SPUBLISH
 * keeps them on one connection. The same rules hold, with these means:
 * - a publication is sent once, to the master owning its slot. One that meets a redirection
 *   (MOVED, ASK), CLUSTERDOWN or a closed connection is lost and counted, never redirected nor
 *   re-sent: a redirected copy could overtake a later publication on another connection (order),
 *   a re-sent one could arrive twice. The failure makes the publisher re-read the slot map.
 * - each master gets its own subscriber connection (ioredis's sharded subscribers). ioredis keeps
 *   the subscribed channels by slot, as our commands reach it; whenever the slot map changes (a
 *   master killed and its replica promoted) or a subscriber connection fails, it connects to the
 *   slot's current master and subscribes there again by itself (measured on loopback with
 *   cluster-node-timeout 2000: within 0.4 s of the promotion, 3.4 to 4.7 s after the kill). A
 *   command of ours that fails or goes unanswered is repaired from the local table (ShardedRepairs).
 * - ready() also pings the master of every slot: it rejects while a slot's master is dead and
 *   not yet replaced. It does not wait for ioredis's own re-subscriptions after a failover.
 */
export class RedisBus extends BaseBus implements Bus {
  private readonly pub: Redis | Cluster;
  private readonly sub: Redis | Cluster;
  private readonly sharded: boolean;
  /** Subscribe and unsubscribe commands not yet answered: what ready() waits for. */
  private readonly pending = new Set<Promise<unknown>>();
  /** On a Redis Cluster: sends subscription commands and repairs the failed ones. */
  private readonly repairs: ShardedRepairs | undefined;
  private readonly warnPublish: (context: object) => void;
  private corked = false;
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshAgain = false;
  private readonly warnSubscribe: (context: object) => void;

  private constructor(options: RedisBusOptions) {
    super(options);
    const name = `${this.prefix}bus:${this.nodeId}`.replace(/[^\w:.-]/g, '_');
    this.warnPublish = throttled(this.log, 'bus: publications lost, Redis refused them');
    this.warnSubscribe = throttled(this.log, 'bus: Redis refused a subscription change');
    const warnPub = throttled(this.log, 'bus: Redis publisher connection error');
    const warnSub = throttled(this.log, 'bus: Redis subscriber connection error');
    this.sharded = options.cluster !== undefined || options.sharded === true;
    ({ pub: this.pub, sub: this.sub } = options.cluster ? clusterClients(options.cluster, options, name) : singleClients(options, name));
    if (this.pub instanceof Cluster && this.sub instanceof Cluster) {
      const sub = this.sub;
      this.repairs = new ShardedRepairs({ sub, wanted: (channel) => this.has(channel), track: (channel, command) => this.track(channel, command) });
      sub.on('ready', () => this.repairs?.run());
      // A master connection that ended (its node died): the slot map is read again at once.
      this.pub.on('-node', () => this.refreshSlots());
      this.pub.on('node error', (error: unknown, node: unknown) => warnPub({ node, ...errorContext(error) }));
      sub.on('node error', (error: unknown, node: unknown) => warnSub({ node, ...errorContext(error) }));
      sub.on('nodeError', (error: unknown, node: unknown) => warnSub({ node, ...errorContext(error) }));
    } else {
      // 'ready' is emitted after ioredis has replayed its offline queue, so this runs last.
      this.sub.on('ready', () => this.resubscribe());
    }
    this.pub.on('error', (error: unknown) => warnPub(errorContext(error)));
    this.sub.on('error', (error: unknown) => warnSub(errorContext(error)));
    this.sub.on(this.sharded ? 'smessageBuffer' : 'messageBuffer', (channel: Buffer, frame: Buffer) => this.receive(channel.toString('utf8'), frame));
  }

  /**
   * Connects both clients; rejects if Redis cannot be reached at start (BackendUnavailableError),
   * or if `url` without `cluster` names a node of a Redis Cluster (see refuseClusterNode).
   */
  static async connect(options: RedisBusOptions): Promise<RedisBus> {
    const bus = new RedisBus(options);
    // ioredis rejects connect() with "Connection is closed."; the reason (refused, TLS, auth) came as an 'error' event before.
    let reason: unknown;
    const remember = (error: unknown) => (reason ??= clusterStartError(error));
    // A Cluster reports each seed it could not use as a 'node error' (closed, TLS, auth, not a cluster).
    for (const client of [bus.pub, bus.sub]) for (const event of ['error', 'node error']) client.on(event, remember);
    try {
      await Promise.all([bus.pub.connect(), bus.sub.connect()]);
      // Publications to a master whose connection is not up yet would be refused.
      if (bus.pub instanceof Cluster) await readyNodes(bus.pub);
    } catch (error) {
      for (const client of [bus.pub, bus.sub]) quietDisconnect(client);
      throw new BackendUnavailableError('redis', { cause: reason ?? error });
    } finally {
      for (const client of [bus.pub, bus.sub]) for (const event of ['error', 'node error']) client.off(event, remember);
    }
    if (bus.pub instanceof Redis) {
      const refused = await refuseClusterNode(bus.pub, options.url).then(() => undefined, (error: unknown) => error);
      if (refused) {
        await bus.close();
        throw refused;
      }
    }
    return bus;
  }

  protected send(channel: string, frame: Buffer): void {
    // The publications of one tick leave in one write per connection (a syscall per PUBLISH was a
    // large share of a node's CPU): sockets are corked at the first and uncorked at the end of the tick.
    if (!this.corked) this.cork();
    const reply = this.sharded ? this.pub.spublish(channel, frame) : this.pub.publish(channel, frame);
    reply.then(
      (receivers) => void (this.counters.crossings += Number(receivers)),
      (error: unknown) => {
        this.counters.publishFailures++;
        this.warnPublish({ channel, ...errorContext(error) });
        if (this.pub instanceof Cluster) this.refreshSlots();
      },
    );
  }

  protected join(channel: string): void {
    this.subscription(channel, true);
  }

  protected leave(channel: string): void {
    this.subscription(channel, false);
  }

  async ready(): Promise<void> {
    if (this.closed) return;
    if (this.pub.status !== 'ready' || this.sub.status !== 'ready') throw new BackendUnavailableError('redis');
    if (this.repairs?.outstanding()) throw new BackendUnavailableError('redis', { cause: new Error('subscriptions are being repaired') });
    let timer: NodeJS.Timeout | undefined;
    let closed: (() => void) | undefined;
    try {
      // Replies come in command order: once PING answers, every earlier PUBLISH has been counted
      // (on a cluster, once every master's connection answers). A PING written just as the
      // connection breaks is never answered nor rejected by ioredis, so the answer is awaited
      // until either client closes, and 2 s at most.
      const broken = new Promise<never>((_, reject) => {
        closed = () => reject(new Error('the connection to Redis closed'));
        this.pub.once('close', closed);
        this.sub.once('close', closed);
        timer = setTimeout(() => reject(new Error(`no answer from Redis within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
      });
      const pinged = this.pub instanceof Cluster ? readyNodes(this.pub) : this.pub.ping();
      await Promise.race([Promise.all([...this.pending, pinged]), broken]);
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

  protected async shutdown(channels: string[]): Promise<void> {
    this.repairs?.stop();
    clearTimeout(this.refreshTimer);
    // Closing a subscriber connection drops its subscriptions. On a cluster ioredis closes the
    // sharded subscriber connections without waiting, so the channels are left first (2 s at
    // most): once close() resolves, Redis counts this node as subscribed to nothing.
    const sub = this.sub;
    if (sub instanceof Cluster && sub.status === 'ready' && channels.length > 0) {
      await withDeadline(Promise.allSettled(channels.map((channel) => sub.sunsubscribe(channel))), READY_TIMEOUT_MS).catch(() => undefined);
    }
    await Promise.all([this.pub, this.sub].map((redis) => (redis.status === 'ready' ? redis.quit().catch(() => redis.disconnect()) : redis.disconnect())));
  }

  private cork(): void {
    const sockets = (this.pub instanceof Cluster ? this.pub.nodes('master') : [this.pub]).map((r) => r.stream as { cork?: () => void; uncork?: () => void } | undefined);
    const corked = sockets.filter((s) => typeof s?.cork === 'function');
    if (corked.length === 0) return;
    this.corked = true;
    for (const socket of corked) socket!.cork!();
    queueMicrotask(() => {
      this.corked = false;
      for (const socket of corked) socket!.uncork?.();
    });
  }

  /** Sends a (un)subscription; on a cluster, one that fails is repaired from the local table. */
  private subscription(channel: string, subscribe: boolean): void {
    if (this.repairs) return this.repairs.send(channel, subscribe);
    const sub = this.sub as Redis;
    if (this.sharded) this.track(channel, subscribe ? sub.ssubscribe(channel) : sub.sunsubscribe(channel));
    else this.track(channel, subscribe ? sub.subscribe(channel) : sub.unsubscribe(channel));
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

  /**
   * Reads the publisher's slot map again: at once, then at most once per 250 ms however many
   * publications fail meanwhile (a request in that time is served when it ends).
   */
  private refreshSlots(): void {
    if (!(this.pub instanceof Cluster) || this.closed) return;
    if (this.refreshTimer) {
      this.refreshAgain = true;
      return;
    }
    this.pub.refreshSlotsCache();
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      if (this.refreshAgain) {
        this.refreshAgain = false;
        this.refreshSlots();
      }
    }, SLOT_REFRESH_MS);
    this.refreshTimer.unref();
  }

  private track(channel: string, command: Promise<unknown>): Promise<unknown> {
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
    return settled;
  }
}


/** Publisher and subscriber on the one Redis at `url`. */
function singleClients(options: RedisBusOptions, name: string): { pub: Redis; sub: Redis } {
  const pub = new Redis(options.url, {
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
  const sub = new Redis(options.url, { ...options.redis, lazyConnect: true, connectionName: `${name}:sub`, autoResubscribe: false, maxRetriesPerRequest: null });
  return { pub, sub };
}

/** Publisher and (sharded) subscriber on a Redis Cluster; see the class comment for the choices. */
function clusterClients(seeds: readonly RedisNodeAddress[], options: RedisBusOptions, name: string): { pub: Cluster; sub: Cluster } {
  const nodes = seeds.map((n) => ({ ...n }));
  const node = clusterNodeOptions(options.url, options.redis);
  const pub = new Cluster(nodes, {
    lazyConnect: true,
    enableOfflineQueue: false,
    // The same hazard as on one Redis (see singleClients), per master.
    enableAutoPipelining: false,
    // Nothing is redirected nor retried: with no redirection allowed, ioredis fails every error
    // (MOVED, ASK, CLUSTERDOWN, a closed connection) at once.
    maxRedirections: 0,
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 0,
    redisOptions: { ...node, connectionName: `${name}:pub`, enableAutoPipelining: false },
  });
  connectNodesAhead(pub);
  const sub = new Cluster(nodes, { lazyConnect: true, shardedSubscribers: true, redisOptions: { ...node, connectionName: `${name}:sub` } });
  return { pub, sub };
}
