import { createServer, type Server, type Socket } from 'node:net';
import { ApiError, BackendUnavailableError, ListenError, OutcomeUnknownError, type Logger } from '../../common/index.ts';
import { throttled } from '../bus/index.ts';
import { FencedError } from '../store/index.ts';
import { RPC_LIMITS, RPC_PROTOCOL_VERSION, secretsOf, type ClusterSecret, type RpcHandler, type RpcLimits } from './rpc.ts';
import { encodeFrame, packValue, type FailReason, type RpcCall, type RpcMessage } from './rpc-frames.ts';
import { newNonce, proof, verifyProof } from './rpc-handshake.ts';
import { FramedSocket } from './rpc-socket.ts';

export interface RpcServerOptions {
  /** This node's id, announced in the handshake. */
  nodeId: string;
  /**
   * The cluster key (clusterSecret()), or the keys of the moment: only nodes that prove they hold
   * one of them get their calls run. A connection stays authenticated once it is, even after its
   * key leaves the list.
   */
  secret: ClusterSecret;
  /** The operations other nodes may call, by name. */
  handlers: Readonly<Record<string, RpcHandler>>;
  log: Logger;
  /** Tests shrink the bounds; production uses RPC_LIMITS. */
  limits?: Partial<RpcLimits>;
  /** How long a port in use is tried again before listen() gives up (default 10 s). */
  retryBindForMs?: number;
}

/**
 * The node-to-node listener: runs the calls of authenticated peers (see rpc.ts and rpc-frames.ts).
 *
 * Guarantees:
 * - a connection runs nothing until its handshake succeeds; a failed or late handshake
 *   (RPC_LIMITS.handshakeMs) closes it, as does anything but `auth` first, a frame over 4 KiB
 *   before the handshake, or over `maxFrameBytes` after it;
 * - every call gets exactly one answer while its connection lives: its result, an ApiError as a
 *   value, or a failure (`unavailable` for a BackendUnavailableError, `internal` for anything
 *   else, which is logged here);
 * - at most `maxInFlight` calls run per connection: excess calls are answered `overloaded` at once
 *   and not run; a call whose budget was spent on arrival is answered `expired` and not run;
 * - past `maxUnwrittenBytes` of unsent answers on a socket, that socket is not read until it drains;
 * - close() stops accepting connections, answers new calls `leaving` (not run), lets the calls
 *   already running finish (up to its grace period), then closes every connection.
 */
export class RpcServer {
  private readonly connections = new Set<ServerConnection>();
  private readonly limits: RpcLimits;
  private readonly warnRefused: (context: object) => void;
  private running = 0;
  private idle: (() => void) | undefined;
  private stopping = false;

  private constructor(
    private readonly server: Server,
    readonly options: RpcServerOptions,
    readonly port: number,
  ) {
    this.limits = { ...RPC_LIMITS, ...options.limits };
    this.warnRefused = throttled(options.log, 'node rpc: refused a connection that did not authenticate');
    server.on('connection', (socket) => this.accept(socket));
  }

  /**
   * Listens on host:port (0 picks a free port). The port is this process's alone (node:net binds
   * without SO_REUSEPORT): a port in use is tried again for up to `retryBindForMs` (a previous
   * instance may still be exiting), then rejects with ListenError `PORT_IN_USE`; any other bind
   * failure rejects at once with ListenError `LISTEN_FAILED`.
   */
  static async listen(host: string, port: number, options: RpcServerOptions): Promise<RpcServer> {
    const deadline = Date.now() + (options.retryBindForMs ?? 10_000);
    for (;;) {
      const server = createServer({ noDelay: true });
      try {
        const bound = await new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen({ port, host, exclusive: true }, () => {
            server.off('error', reject);
            resolve((server.address() as { port: number }).port);
          });
        });
        server.on('error', (error) => options.log.error({ err: error.message }, 'node rpc: listener failed'));
        return new RpcServer(server, options, bound);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EADDRINUSE') throw new ListenError('LISTEN_FAILED', host, port, code ?? String(error), { cause: error });
        if (port === 0 || Date.now() >= deadline) throw new ListenError('PORT_IN_USE', host, port, undefined, { cause: error });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** Stops accepting; lets running calls finish for up to `graceMs`; closes every connection. */
  async close(graceMs = 5_000): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const stopped = new Promise<void>((resolve) => this.server.close(() => resolve()));
    if (this.running > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        timer.unref();
        this.idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    for (const c of this.connections) c.end();
    // A peer that does not close its side within a second is cut off.
    const cutoff = setTimeout(() => {
      for (const c of this.connections) c.destroy();
    }, 1_000);
    cutoff.unref();
    await stopped;
    clearTimeout(cutoff);
  }

  /** Whether close() has begun: new calls are refused unrun. */
  get closing(): boolean {
    return this.stopping;
  }

  /** Open connections (authenticated or not), calls running, and connections not read until they drain. */
  stats(): { connections: number; running: number; paused: number } {
    let paused = 0;
    for (const c of this.connections) if (c.paused) paused++;
    return { connections: this.connections.size, running: this.running, paused };
  }

  private accept(socket: Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    const connection = new ServerConnection(this, socket, this.limits, this.warnRefused);
    this.connections.add(connection);
    connection.onClosed = () => this.connections.delete(connection);
  }

  /** Runs one call of an authenticated connection (for ServerConnection); resolves once answered, never rejects. */
  async run(call: RpcCall, send: (message: RpcMessage) => void, sendFrame: (frame: Buffer) => void): Promise<void> {
    const handler = Object.hasOwn(this.options.handlers, call.op) ? this.options.handlers[call.op] : undefined;
    if (!handler) {
      this.options.log.warn({ op: call.op.slice(0, 60) }, 'node rpc: call of an unknown operation (a node of another version?)');
      return send(failed(call.id, 'internal'));
    }
    this.running++;
    try {
      const result = await handler(call.appId, call.chatId, call.args);
      if (result instanceof ApiError) return send({ type: 'apiError', id: call.id, code: result.code, detail: result.detail, extra: result.extra });
      this.reply(call, result, sendFrame);
    } catch (error) {
      if (error instanceof FencedError && error.holder) return send(error.holder.address ? { type: 'held', id: call.id, holder: error.holder.id, address: error.holder.address } : { type: 'held', id: call.id, holder: error.holder.id });
      if (error instanceof OutcomeUnknownError) return send({ type: 'failed', id: call.id, reason: 'unavailable', outcomeUnknown: true });
      if (error instanceof BackendUnavailableError) return send(failed(call.id, 'unavailable'));
      this.options.log.error({ err: error instanceof Error ? error.stack : String(error), op: call.op }, 'node rpc: forwarded call failed');
      send(failed(call.id, 'internal'));
    } finally {
      if (--this.running === 0 && this.idle) this.idle();
    }
  }

  /** The result in one frame, or in parts when it does not fit one. */
  private reply(call: RpcCall, value: unknown, sendFrame: (frame: Buffer) => void): void {
    const frame = encodeFrame({ type: 'ok', id: call.id, value });
    if (frame.length - 4 <= this.limits.maxFrameBytes) return sendFrame(frame);
    const packed = packValue(value);
    if (packed.length > this.limits.maxReplyBytes) {
      this.options.log.error({ op: call.op, bytes: packed.length }, 'node rpc: result too large to send');
      return sendFrame(encodeFrame(failed(call.id, 'internal')));
    }
    for (let offset = 0; offset < packed.length; offset += this.limits.replyPartBytes) {
      const end = Math.min(packed.length, offset + this.limits.replyPartBytes);
      sendFrame(encodeFrame({ type: 'part', id: call.id, data: packed.subarray(offset, end), last: end === packed.length }));
    }
  }
}

const failed = (id: number, reason: FailReason, retryAfterSeconds?: number): RpcMessage =>
  retryAfterSeconds === undefined ? { type: 'failed', id, reason } : { type: 'failed', id, reason, retryAfterSeconds };

/** The largest frame an unauthenticated peer may send: an `auth` message is about 400 bytes. */
const HANDSHAKE_FRAME_BYTES = 4096;

/** One peer's connection: the handshake, then its calls. */
class ServerConnection {
  private readonly framed: FramedSocket;
  private readonly nonce = newNonce();
  private readonly handshakeTimer: NodeJS.Timeout;
  private peerId: string | undefined;
  private inFlight = 0;
  onClosed: () => void = () => {};

  constructor(
    private readonly server: RpcServer,
    socket: Socket,
    private readonly limits: RpcLimits,
    private readonly warnRefused: (context: object) => void,
  ) {
    const remote = `${socket.remoteAddress}:${socket.remotePort}`;
    this.framed = new FramedSocket(socket, {
      // Until the peer has authenticated, a frame is no bigger than an `auth` message.
      maxFrameBytes: HANDSHAKE_FRAME_BYTES,
      pauseAboveBytes: limits.maxUnwrittenBytes,
      onMessage: (message) => this.onMessage(message, remote),
      onClose: (error) => {
        clearTimeout(this.handshakeTimer);
        if (error && this.peerId) server.options.log.warn({ peer: this.peerId, err: error.message }, 'node rpc: connection from a peer closed');
        else if (error) this.warnRefused({ remote, err: error.message });
        this.onClosed();
      },
    });
    this.handshakeTimer = setTimeout(() => this.refuse(remote, 'no handshake in time'), limits.handshakeMs);
    this.handshakeTimer.unref();
    this.framed.send({ type: 'hello', v: RPC_PROTOCOL_VERSION, nodeId: server.options.nodeId, nonce: this.nonce });
  }

  get paused(): boolean {
    return this.framed.isPaused;
  }

  end(): void {
    this.framed.end();
  }

  destroy(): void {
    this.framed.destroy();
  }

  private refuse(remote: string, why: string): void {
    if (this.framed.isClosed) return;
    this.warnRefused({ remote, why });
    this.framed.destroy();
  }

  private onMessage(message: RpcMessage | undefined, remote: string): void {
    if (this.peerId === undefined) return this.authenticate(message, remote);
    if (message?.type !== 'call') {
      // Not an answerable call: a peer of a newer version, or a bug. Ignored.
      this.server.options.log.debug({ peer: this.peerId, type: message?.type }, 'node rpc: ignored a message');
      return;
    }
    if (this.server.closing) return this.framed.send(failed(message.id, 'leaving'));
    if (this.inFlight >= this.limits.maxInFlight) return this.framed.send(failed(message.id, 'overloaded', this.limits.overloadedRetrySeconds));
    if (message.budgetMs <= 0) return this.framed.send(failed(message.id, 'expired'));
    this.inFlight++;
    void this.server
      .run(
        message,
        (m) => this.framed.send(m),
        (f) => this.framed.sendFrame(f),
      )
      .finally(() => this.inFlight--);
  }

  private authenticate(message: RpcMessage | undefined, remote: string): void {
    if (message?.type !== 'auth' || message.v !== RPC_PROTOCOL_VERSION) return this.refuse(remote, `expected auth v${RPC_PROTOCOL_VERSION}, got ${message ? `${message.type}` : 'an unknown message'}`);
    const { nodeId, secret } = this.server.options;
    const transcript = { serverId: nodeId, serverNonce: this.nonce, clientId: message.nodeId, clientNonce: message.nonce };
    const held = secretsOf(secret).find((s) => verifyProof(s, 'client', transcript, message.proof));
    if (!held) return this.refuse(remote, 'wrong proof');
    clearTimeout(this.handshakeTimer);
    this.peerId = message.nodeId;
    this.framed.setMaxFrameBytes(this.limits.maxFrameBytes);
    this.framed.send({ type: 'welcome', proof: proof(held, 'server', transcript) });
  }
}
