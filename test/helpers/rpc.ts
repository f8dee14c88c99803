import { randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { createLogger } from '../../common/index.ts';
import {
  decodeMessage,
  encodeFrame,
  FrameReader,
  newNonce,
  proof,
  RPC_PROTOCOL_VERSION,
  RpcClient,
  RpcServer,
  type ClusterSecret,
  type RpcHandler,
  type RpcLimits,
  type RpcMessage,
} from '../../node/cluster/index.ts';

export const silent = createLogger('silent', 'rpc-test');
export const newSecret = () => randomBytes(32);
export const addressOf = (server: RpcServer) => `127.0.0.1:${server.port}`;

export const serve = (secret: ClusterSecret, handlers: Record<string, RpcHandler>, limits: Partial<RpcLimits> = {}, nodeId = 'server') =>
  RpcServer.listen('127.0.0.1', 0, { nodeId, secret, handlers, log: silent, limits });

export const caller = (secret: ClusterSecret, limits: Partial<RpcLimits> = {}, nodeId = 'caller') => new RpcClient({ nodeId, secret, log: silent, limits });

/** A deferred a handler can wait on, and a count of how many calls reached it. */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const state = { entered: 0, waiters: [] as { n: number; resolve: () => void }[] };
  return {
    open,
    get entered() {
      return state.entered;
    },
    /** A handler that waits for open() and returns its first argument. */
    handler: (async (_appId, _chatId, args) => {
      state.entered++;
      for (const w of state.waiters.filter((w) => state.entered >= w.n)) w.resolve();
      await opened;
      return args[0];
    }) satisfies RpcHandler,
    /** Resolves once `n` calls have entered the handler. */
    reached: (n: number) => new Promise<void>((resolve) => (state.entered >= n ? resolve() : state.waiters.push({ n, resolve }))),
  };
}

/** What a promise rejects with; undefined when it resolves. */
export const failure = (promise: Promise<unknown>): Promise<unknown> => promise.then(
  () => undefined,
  (error: unknown) => error,
);

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A hand-driven TCP peer speaking the frame format: sees every message, sends anything. */
export class RawPeer {
  readonly received: (RpcMessage | undefined)[] = [];
  readonly closed: Promise<void>;
  private readonly reader = new FrameReader(1 << 30);
  private waiters: (() => void)[] = [];

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.reader.push(chunk, (body) => this.received.push(decodeMessage(body)));
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on('error', () => {});
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    void this.closed.then(() => {
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static connect(port: number): Promise<RawPeer> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => resolve(new RawPeer(socket)));
      socket.once('error', reject);
    });
  }

  /** The i-th message received, once it is; undefined if the connection closed first. */
  async message(i: number): Promise<RpcMessage | undefined> {
    while (this.received.length <= i) {
      if (this.socket.destroyed) return undefined;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    return this.received[i];
  }

  send(message: RpcMessage): void {
    this.socket.write(encodeFrame(message));
  }

  /** Authenticates as a node holding `secret`; resolves with the server's answer (welcome or nothing). */
  async handshake(secret: Buffer, nodeId = 'raw'): Promise<RpcMessage | undefined> {
    const hello = await this.message(0);
    if (hello?.type !== 'hello') throw new Error(`expected hello, got ${hello?.type}`);
    const nonce = newNonce();
    const transcript = { serverId: hello.nodeId, serverNonce: hello.nonce, clientId: nodeId, clientNonce: nonce };
    this.send({ type: 'auth', v: RPC_PROTOCOL_VERSION, nodeId, nonce, proof: proof(secret, 'client', transcript) });
    return this.message(1);
  }

  close(): void {
    this.socket.destroy();
  }
}
