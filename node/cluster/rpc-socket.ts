import type { Socket } from 'node:net';
import { decodeMessage, encodeFrame, FrameReader, type RpcMessage } from './rpc-frames.ts';

export interface FramedSocketOptions {
  /** The largest frame body accepted (see setMaxFrameBytes). */
  maxFrameBytes: number;
  /**
   * Stop reading while more than this many bytes wait to be written, until the socket drains (the
   * callee's side: a caller that does not read its answers stops getting its calls read). Absent
   * on the caller's side, which always reads, so the two can never wait for each other.
   */
  pauseAboveBytes?: number;
  /** Each frame's message, in order; undefined for a body that is no known message. */
  onMessage: (message: RpcMessage | undefined) => void;
  /** Once, when the socket has closed for any reason, with the error that closed it if any. */
  onClose: (error: Error | undefined) => void;
}

/**
 * A socket carrying RpcMessages in length-prefixed frames.
 * - Messages sent in the same tick leave in one write (corked, written on the next tick).
 * - A frame longer than the maximum closes the connection; nothing after it is read.
 * - After destroy() or close, sends are dropped and no message is handed over.
 */
export class FramedSocket {
  private queue: Buffer[] = [];
  private flushScheduled = false;
  private paused = false;
  private closed = false;
  private error: Error | undefined;
  private readonly reader: FrameReader;

  constructor(
    readonly socket: Socket,
    private readonly options: FramedSocketOptions,
  ) {
    socket.setNoDelay(true);
    const reader = (this.reader = new FrameReader(options.maxFrameBytes));
    const onFrame = (body: Buffer) => {
      if (!this.closed) options.onMessage(decodeMessage(body));
    };
    socket.on('data', (chunk: Buffer) => {
      if (this.closed) return;
      if (!reader.push(chunk, onFrame)) this.destroy(new Error(`frame larger than ${reader.maxBytes} bytes`));
    });
    socket.on('drain', () => {
      if (!this.paused) return;
      this.paused = false;
      socket.resume();
    });
    socket.on('error', (error) => {
      this.error ??= error;
    });
    socket.on('close', () => {
      this.closed = true;
      this.queue = [];
      options.onClose(this.error);
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Changes the largest frame accepted from now on (the listener allows full frames only after the handshake). */
  setMaxFrameBytes(bytes: number): void {
    this.reader.maxBytes = bytes;
  }

  /** Whether reading is stopped until the socket drains. */
  get isPaused(): boolean {
    return this.paused;
  }

  /** Queues a message for this tick's write. Dropped once the socket is closed. */
  send(message: RpcMessage): void {
    this.sendFrame(encodeFrame(message));
  }

  sendFrame(frame: Buffer): void {
    if (this.closed) return;
    this.queue.push(frame);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    process.nextTick(this.flush);
  }

  /** Writes what is queued, then closes this side; the socket closes once the peer closes its own. */
  end(): void {
    this.flush();
    if (!this.closed) this.socket.end();
  }

  /** Closes at once; what is queued is dropped. */
  destroy(error?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.error ??= error;
    this.queue = [];
    this.socket.destroy();
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    const frames = this.queue;
    if (frames.length === 0 || this.closed) return;
    this.queue = [];
    if (frames.length === 1) this.socket.write(frames[0]!);
    else {
      this.socket.cork();
      for (const frame of frames) this.socket.write(frame);
      this.socket.uncork();
    }
    const limit = this.options.pauseAboveBytes;
    if (limit !== undefined && !this.paused && this.socket.writableLength > limit) {
      this.paused = true;
      this.socket.pause();
    }
  };
}
