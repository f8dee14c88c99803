import { channelOf, emptyStats, type Bus, type BusHandler, type BusPayload, type BusStats, type BusTopic } from './bus.ts';
import { BUS_PROTOCOL_VERSION, decodeEnvelope, encodeEnvelope } from './envelope.ts';
import { errorContext, stderrLogger, throttled, type BusLogger } from './log.ts';

export interface BusOptions {
  nodeId: string;
  /** Prepended to every channel, so clusters (or test runs) sharing a transport stay apart. */
  prefix?: string;
  log?: BusLogger;
}

interface Registration {
  readonly handler: BusHandler;
}

/**
 * Everything a bus does that does not depend on the transport: the envelope, reference-counted
 * subscriptions, dropping own echoes and malformed frames, isolating handlers, counting. A
 * transport supplies only `send`, `join`, `leave`, `ready` and `shutdown` (the split of
 * socket.io's cluster adapter). Transports call `receive` with each frame of a joined channel.
 */
export abstract class BaseBus implements Bus {
  readonly nodeId: string;
  protected readonly prefix: string;
  protected readonly log: BusLogger;
  protected readonly counters: BusStats = emptyStats();
  protected closed = false;
  private readonly byChannel = new Map<string, Set<Registration>>();
  /** Per joined channel, the number of the newest frame received from each other node. */
  private readonly newest = new Map<string, Map<string, number>>();
  /**
   * The number of this node's last publication. It starts from the clock in microseconds, so a
   * node restarted under the same id still numbers past what it published before (unless it
   * published more than a million a second).
   */
  private number = Date.now() * 1000;
  private readonly warnMalformed: (context: object) => void;
  private readonly warnHandler: (context: object) => void;

  constructor(options: BusOptions) {
    if (Buffer.byteLength(options.nodeId) > 255 || options.nodeId === '') throw new RangeError('node id must be 1 to 255 bytes');
    this.nodeId = options.nodeId;
    this.prefix = options.prefix ?? '';
    this.log = options.log ?? stderrLogger;
    this.warnMalformed = throttled(this.log, 'bus: dropped frames of an unknown protocol version or shape');
    this.warnHandler = throttled(this.log, 'bus: a subscription handler threw');
  }

  /** Hands a frame to the transport; failures are the transport's to count and log, never to throw. */
  protected abstract send(channel: string, frame: Buffer): void;
  /** Subscribes the node to a channel at the transport (first local handler). */
  protected abstract join(channel: string): void;
  /** Unsubscribes the node from a channel at the transport (last local handler gone). */
  protected abstract leave(channel: string): void;
  /** Releases the transport; `channels` are those still joined. */
  protected abstract shutdown(channels: string[]): Promise<void>;
  abstract ready(): Promise<void>;

  publish(topic: BusTopic, payload: BusPayload): void {
    if (this.closed) return;
    const number = ++this.number;
    const frame =
      typeof payload === 'string'
        ? encodeEnvelope({ v: BUS_PROTOCOL_VERSION, number, type: 'text', origin: this.nodeId, payload })
        : encodeEnvelope({ v: BUS_PROTOCOL_VERSION, number, type: 'binary', origin: this.nodeId, payload });
    this.counters.published++;
    this.send(channelOf(this.prefix, topic), frame);
  }

  subscribe(topic: BusTopic, handler: BusHandler): () => void {
    if (this.closed) return () => undefined;
    const channel = channelOf(this.prefix, topic);
    let set = this.byChannel.get(channel);
    if (!set) {
      this.byChannel.set(channel, (set = new Set()));
      this.join(channel);
    }
    // A registration per call, so one function subscribed twice needs two removals.
    const registration: Registration = { handler };
    set.add(registration);
    return () => this.remove(channel, registration);
  }

  unsubscribe(topic: BusTopic, handler: BusHandler): void {
    const channel = channelOf(this.prefix, topic);
    for (const registration of this.byChannel.get(channel) ?? []) {
      if (registration.handler === handler) return this.remove(channel, registration);
    }
  }

  stats(): Readonly<BusStats> {
    return { ...this.counters };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const channels = [...this.byChannel.keys()];
    this.byChannel.clear();
    this.newest.clear();
    await this.shutdown(channels);
  }

  /** Whether a channel has local handlers. */
  protected has(channel: string): boolean {
    return this.byChannel.has(channel);
  }

  /** Channels with local handlers: what a transport re-subscribes after reconnecting. */
  protected joined(): string[] {
    return [...this.byChannel.keys()];
  }

  protected receive(channel: string, frame: Buffer): void {
    if (this.closed) return;
    this.counters.received++;
    const envelope = decodeEnvelope(frame);
    if (!envelope) {
      this.counters.malformed++;
      this.warnMalformed({ channel, bytes: frame.length, version: frame[0] });
      return;
    }
    if (envelope.origin === this.nodeId) {
      this.counters.echoesDropped++;
      return;
    }
    if (envelope.number !== undefined) {
      let byOrigin = this.newest.get(channel);
      if (!byOrigin) {
        if (!this.byChannel.has(channel)) return;
        this.newest.set(channel, (byOrigin = new Map()));
      }
      if (envelope.number <= (byOrigin.get(envelope.origin) ?? -1)) {
        this.counters.staleDropped++;
        return;
      }
      byOrigin.set(envelope.origin, envelope.number);
    }
    for (const { handler } of this.byChannel.get(channel) ?? []) {
      try {
        handler(envelope.payload, envelope.origin);
      } catch (error) {
        this.counters.handlerErrors++;
        this.warnHandler({ channel, ...errorContext(error) });
      }
    }
  }

  private remove(channel: string, registration: Registration): void {
    const set = this.byChannel.get(channel);
    if (!set?.delete(registration) || set.size > 0) return;
    this.byChannel.delete(channel);
    this.newest.delete(channel);
    if (!this.closed) this.leave(channel);
  }
}
