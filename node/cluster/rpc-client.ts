import { connect } from 'node:net';
import { ApiError, BackendUnavailableError, OutcomeUnknownError, OverloadedError, type Logger } from '../../common/index.ts';
import { throttled } from '../bus/index.ts';
import { HeldElsewhereError, NodeUnreachableError, parseAddress, RPC_LIMITS, RPC_PROTOCOL_VERSION, secretsOf, type ClusterSecret, type RpcLimits } from './rpc.ts';
import { encodeFrame, unpackValue, type Handshake, type RpcMessage, type RpcReply } from './rpc-frames.ts';
import { newNonce, proof, verifyProof, type Transcript } from './rpc-handshake.ts';
import { FramedSocket } from './rpc-socket.ts';

export interface RpcClientOptions {
  /** This node's id, announced in the handshake. */
  nodeId: string;
  /** The cluster key (clusterSecret()), or the keys of the moment: a connection proves with the first. */
  secret: ClusterSecret;
  log: Logger;
  /** Tests shrink the bounds; production uses RPC_LIMITS. */
  limits?: Partial<RpcLimits>;
}

export interface RpcCallOptions {
  /** How long to wait for the answer (default RPC_LIMITS.callTimeoutMs); the callee is told the budget left. */
  timeoutMs?: number;
}

/** What forwarding needs of the client (ClusterRouter takes this, so a test can stand in for it). */
export interface RpcCaller {
  call(address: string, op: string, appId: string, chatId: string, args: unknown[], options?: RpcCallOptions): Promise<unknown>;
}

/**
 * Calls other nodes over one persistent, authenticated connection per peer address, made on first
 * use and again after it closes, shared by every call to that peer (many in flight at once).
 *
 * A call resolves with the callee's result, or the ApiError it returned (as a value). It rejects:
 * - NodeUnreachableError when it was never written (no connection, a failed handshake, or the
 *   callee is leaving and refused it): nothing ran, the caller may try again or elsewhere;
 * - OutcomeUnknownError (a BackendUnavailableError) when it was written but its outcome is
 *   unknown (the connection closed, no answer in time, or the callee's own write timed out): the
 *   client retries, with its idempotency key where it has one;
 * - BackendUnavailableError when a backend of the callee was down;
 * - OverloadedError (a BackendUnavailableError) at once, unsent, when `maxInFlight` calls are
 *   already waiting on the connection, or when the callee refused it for the same reason;
 * - Error for a failure the callee logged (a bug there).
 * Every call settles: by its answer, its timer, the connection's close, or close().
 */
export class RpcClient implements RpcCaller {
  private readonly peers = new Map<string, PeerConnection>();
  private readonly limits: RpcLimits;
  private readonly warnHandshake: (context: object) => void;
  private closed = false;

  constructor(private readonly options: RpcClientOptions) {
    this.limits = { ...RPC_LIMITS, ...options.limits };
    this.warnHandshake = throttled(options.log, 'node rpc: could not connect to a node');
  }

  call(address: string, op: string, appId: string, chatId: string, args: unknown[], options: RpcCallOptions = {}): Promise<unknown> {
    if (this.closed) return Promise.reject(new BackendUnavailableError('node rpc client (closed)'));
    let peer = this.peers.get(address);
    if (!peer) {
      const target = parseAddress(address);
      if (!target) return Promise.reject(new NodeUnreachableError(address, { cause: new Error('not a host:port address') }));
      const created = new PeerConnection(address, target, this.options, this.limits, this.warnHandshake, () => {
        if (this.peers.get(address) === created) this.peers.delete(address);
      });
      this.peers.set(address, created);
      peer = created;
    }
    return peer.call(op, appId, chatId, args, options.timeoutMs ?? this.limits.callTimeoutMs);
  }

  /** Closes every connection; calls still waiting reject. */
  async close(): Promise<void> {
    this.closed = true;
    const peers = [...this.peers.values()];
    this.peers.clear();
    await Promise.all(peers.map((p) => p.close()));
  }
}

/** A connection that returns nothing at all while a call waits this long or longer is closed. */
const SILENT_PEER_MS = 2_000;

interface PendingCall {
  id: number;
  op: string;
  appId: string;
  chatId: string;
  args: unknown[];
  deadline: number;
  timer: NodeJS.Timeout;
  /** When the call was written to the socket; undefined while it waits for the connection. */
  sentAt: number | undefined;
  parts: Buffer[];
  partBytes: number;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** One connection to one peer address, and the calls waiting on it. */
class PeerConnection {
  private readonly framed: FramedSocket;
  private readonly calls = new Map<number, PendingCall>();
  private readonly clientNonce = newNonce();
  private readonly handshakeTimer: NodeJS.Timeout;
  private readonly closed: Promise<void>;
  private waiting: PendingCall[] = [];
  private transcript: Transcript | undefined;
  /** The cluster key this connection proved with; the server must prove with the same one. */
  private secret: Buffer | undefined;
  private ready = false;
  private nextId = 0;
  private lastReceived = 0;
  private closing = false;

  constructor(
    private readonly address: string,
    target: { host: string; port: number },
    private readonly options: RpcClientOptions,
    private readonly limits: RpcLimits,
    private readonly warnHandshake: (context: object) => void,
    private readonly onGone: () => void,
  ) {
    const socket = connect({ host: target.host, port: target.port });
    socket.setKeepAlive(true, 5_000);
    let closed!: () => void;
    this.closed = new Promise((resolve) => (closed = resolve));
    this.framed = new FramedSocket(socket, {
      maxFrameBytes: limits.maxFrameBytes,
      onMessage: (message) => this.onMessage(message),
      onClose: (error) => {
        this.onClose(error);
        closed();
      },
    });
    this.handshakeTimer = setTimeout(() => this.framed.destroy(new Error(`no handshake within ${limits.handshakeMs} ms`)), limits.handshakeMs);
    this.handshakeTimer.unref();
  }

  call(op: string, appId: string, chatId: string, args: unknown[], timeoutMs: number): Promise<unknown> {
    if (this.calls.size >= this.limits.maxInFlight) return Promise.reject(new OverloadedError(`node ${this.address}`, this.limits.overloadedRetrySeconds));
    return new Promise((resolve, reject) => {
      this.nextId = (this.nextId + 1) >>> 0;
      const call: PendingCall = { id: this.nextId, op, appId, chatId, args, deadline: Date.now() + timeoutMs, timer: undefined as unknown as NodeJS.Timeout, sentAt: undefined, parts: [], partBytes: 0, resolve, reject };
      call.timer = setTimeout(() => this.expire(call, timeoutMs), timeoutMs);
      call.timer.unref();
      this.calls.set(call.id, call);
      if (this.ready) this.write(call);
      else this.waiting.push(call);
    });
  }

  close(): Promise<void> {
    this.closing = true;
    this.framed.destroy(new Error('client closed'));
    return this.closed;
  }

  private write(call: PendingCall): void {
    let frame: Buffer;
    try {
      frame = encodeFrame({ type: 'call', id: call.id, op: call.op, appId: call.appId, chatId: call.chatId, args: call.args, budgetMs: call.deadline - Date.now() });
    } catch (error) {
      return this.settle(call.id)?.reject(new Error(`cannot encode the call ${call.op}`, { cause: error }));
    }
    if (frame.length - 4 > this.limits.maxFrameBytes) return this.settle(call.id)?.reject(new Error(`call ${call.op} exceeds ${this.limits.maxFrameBytes} bytes`));
    call.sentAt = Date.now();
    this.framed.sendFrame(frame);
  }

  /** Removes a call from the books; undefined when it has settled already. */
  private settle(id: number): PendingCall | undefined {
    const call = this.calls.get(id);
    if (!call) return undefined;
    this.calls.delete(id);
    clearTimeout(call.timer);
    return call;
  }

  private expire(call: PendingCall, timeoutMs: number): void {
    if (!this.settle(call.id)) return;
    if (call.sentAt === undefined) {
      this.waiting = this.waiting.filter((c) => c !== call);
      return call.reject(new NodeUnreachableError(this.address, { cause: new Error(`no connection within ${timeoutMs} ms`) }));
    }
    call.reject(new OutcomeUnknownError(`node ${this.address}`, { cause: new Error(`no answer within ${timeoutMs} ms`) }));
    // Nothing at all came back for a long wait: the connection is taken for dead (a frozen or
    // partitioned peer), so the next call dials again instead of waiting out another timeout.
    if (this.lastReceived < call.sentAt && timeoutMs >= SILENT_PEER_MS) this.framed.destroy(new Error(`peer silent for ${timeoutMs} ms`));
  }

  private onMessage(message: RpcMessage | undefined): void {
    this.lastReceived = Date.now();
    if (!this.ready) return this.handshake(message);
    switch (message?.type) {
      case 'ok':
        return this.settle(message.id)?.resolve(message.value);
      case 'part':
        return this.part(message);
      case 'apiError':
        return this.settle(message.id)?.resolve(new ApiError(message.code, message.detail, message.extra));
      case 'held':
        return this.settle(message.id)?.reject(new HeldElsewhereError(message.address ? { id: message.holder, address: message.address } : { id: message.holder }));
      case 'failed':
        return this.failed(message);
      default:
        // Unknown, or a message a server never sends after the handshake: ignored.
        this.options.log.debug({ peer: this.address, type: message?.type }, 'node rpc: ignored a message');
    }
  }

  private part(message: Extract<RpcReply, { type: 'part' }>): void {
    const call = this.calls.get(message.id);
    if (!call) return;
    call.parts.push(Buffer.from(message.data));
    call.partBytes += message.data.length;
    if (call.partBytes > this.limits.maxReplyBytes) return this.settle(call.id)?.reject(new Error(`reply to ${call.op} exceeds ${this.limits.maxReplyBytes} bytes`));
    if (!message.last) return;
    this.settle(call.id);
    try {
      call.resolve(unpackValue(Buffer.concat(call.parts, call.partBytes)));
    } catch (error) {
      call.reject(new Error(`reply to ${call.op} cannot be decoded`, { cause: error }));
    }
  }

  private failed(message: Extract<RpcReply, { type: 'failed' }>): void {
    const call = this.settle(message.id);
    if (!call) return;
    const node = `node ${this.address}`;
    switch (message.reason) {
      case 'overloaded':
        return call.reject(new OverloadedError(node, message.retryAfterSeconds ?? this.limits.overloadedRetrySeconds));
      case 'leaving':
        return call.reject(new NodeUnreachableError(this.address, { cause: new Error('the node is leaving; nothing ran') }));
      case 'unavailable':
        if (message.outcomeUnknown) return call.reject(new OutcomeUnknownError(node, { cause: new Error('a write of the node has an unknown outcome') }));
        return call.reject(new BackendUnavailableError(node, { cause: new Error('a backend of the node is unavailable') }));
      case 'expired':
        return call.reject(new BackendUnavailableError(node, { cause: new Error('the call arrived after its deadline; nothing ran') }));
      case 'internal':
        return call.reject(new Error(`${node} failed ${call.op}: internal error (logged there)`));
    }
  }

  private handshake(message: RpcMessage | undefined): void {
    if (!this.transcript) {
      if (message?.type !== 'hello' || message.v !== RPC_PROTOCOL_VERSION) return this.refuse(`expected hello v${RPC_PROTOCOL_VERSION}`, message);
      this.transcript = { serverId: message.nodeId, serverNonce: message.nonce, clientId: this.options.nodeId, clientNonce: this.clientNonce };
      const secret = secretsOf(this.options.secret)[0];
      if (!secret) return this.refuse('this node has no cluster key', message);
      this.secret = secret;
      const auth: Handshake = { type: 'auth', v: RPC_PROTOCOL_VERSION, nodeId: this.options.nodeId, nonce: this.clientNonce, proof: proof(secret, 'client', this.transcript) };
      return this.framed.send(auth);
    }
    if (message?.type !== 'welcome' || !this.secret || !verifyProof(this.secret, 'server', this.transcript, message.proof)) return this.refuse('the peer did not prove it holds the cluster key', message);
    clearTimeout(this.handshakeTimer);
    this.ready = true;
    const waiting = this.waiting;
    this.waiting = [];
    for (const call of waiting) this.write(call);
  }

  private refuse(why: string, message: RpcMessage | undefined): void {
    this.framed.destroy(new Error(`${why} (got ${message?.type ?? 'an unknown message'})`));
  }

  private onClose(error: Error | undefined): void {
    clearTimeout(this.handshakeTimer);
    this.onGone();
    if (!this.ready && !this.closing) this.warnHandshake({ peer: this.address, err: error?.message ?? 'closed during the handshake' });
    const cause = error ?? new Error('connection closed');
    for (const call of this.calls.values()) {
      clearTimeout(call.timer);
      call.reject(call.sentAt === undefined ? new NodeUnreachableError(this.address, { cause }) : new OutcomeUnknownError(`node ${this.address}`, { cause }));
    }
    this.calls.clear();
    this.waiting = [];
  }
}
