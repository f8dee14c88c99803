import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

export interface RawWsOptions {
  /** Source address to connect from: 127.0.0.x spreads 100k sockets past one address's ephemeral ports. */
  localAddress?: string;
  /** Called for every text or binary frame, with its payload (valid only during the call). */
  onFrame(payload: Buffer): void;
  /** Called once: after the handshake (status 101), or with the status or error that refused it. */
  onOpen(error?: string): void;
  /** Called once when an open socket closes, with the close frame's code and reason if there was one. */
  onClose(reason: string): void;
}

const OP_TEXT = 0x1;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;

/**
 * A minimal RFC 6455 client over a plain socket: the handshake, masked frames out, unmasked frames
 * in, pongs to pings. No extensions, no fragmented messages (the servers measured never fragment
 * small frames). Every system in the benchmark is driven through this same client, so the
 * generator's cost per frame is the same for all of them and small: no per-frame event objects,
 * and a socket weighs a few kilobytes, which is what lets two processes hold 100k of them.
 */
export class RawWs {
  private readonly socket: Socket;
  private pending: Buffer | undefined;
  private open = false;
  private closed = false;
  private readonly mask = randomBytes(4);

  constructor(url: string, private readonly options: RawWsOptions) {
    const u = new URL(url);
    this.socket = connect({ host: u.hostname, port: Number(u.port), localAddress: options.localAddress, noDelay: true });
    this.socket.once('connect', () => {
      const key = randomBytes(16).toString('base64');
      this.socket.write(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    this.socket.on('data', (chunk) => this.data(chunk));
    this.socket.on('error', (error) => this.finish(error.message));
    this.socket.on('close', () => this.finish(this.open ? 'closed abruptly (1006)' : 'closed before the handshake'));
  }

  get isOpen(): boolean {
    return this.open && !this.closed;
  }

  send(text: string): void {
    if (!this.isOpen) return;
    this.socket.write(this.frame(OP_TEXT, Buffer.from(text)));
  }

  close(): void {
    this.socket.destroy();
  }

  private finish(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.open) this.options.onOpen(reason);
    else this.options.onClose(reason);
    this.socket.destroy();
  }

  private frame(opcode: number, payload: Buffer): Buffer {
    const n = payload.length;
    const head = n < 126 ? 2 : n < 65536 ? 4 : 10;
    const out = Buffer.allocUnsafe(head + 4 + n);
    out[0] = 0x80 | opcode;
    if (n < 126) out[1] = 0x80 | n;
    else if (n < 65536) {
      out[1] = 0x80 | 126;
      out.writeUInt16BE(n, 2);
    } else {
      out[1] = 0x80 | 127;
      out.writeBigUInt64BE(BigInt(n), 2);
    }
    this.mask.copy(out, head);
    for (let i = 0; i < n; i++) out[head + 4 + i] = payload[i]! ^ this.mask[i & 3]!;
    return out;
  }

  private data(chunk: Buffer): void {
    let buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    if (!this.open) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        this.pending = buf;
        return;
      }
      const status = buf.toString('latin1', 9, 12);
      if (status !== '101') return this.finish(`HTTP ${status}`);
      this.open = true;
      this.options.onOpen();
      buf = buf.subarray(end + 4);
    }
    let at = 0;
    while (buf.length - at >= 2) {
      const opcode = buf[at]! & 0x0f;
      let len = buf[at + 1]! & 0x7f;
      let head = 2;
      if (len === 126) {
        if (buf.length - at < 4) break;
        len = buf.readUInt16BE(at + 2);
        head = 4;
      } else if (len === 127) {
        if (buf.length - at < 10) break;
        len = Number(buf.readBigUInt64BE(at + 2));
        head = 10;
      }
      if (buf.length - at < head + len) break;
      const payload = buf.subarray(at + head, at + head + len);
      at += head + len;
      if (opcode === OP_PING) this.socket.write(this.frame(OP_PONG, payload));
      else if (opcode === OP_CLOSE) {
        this.finish(payload.length >= 2 ? `closed ${payload.readUInt16BE(0)}` : 'closed');
        return;
      } else if (opcode !== OP_PONG) this.options.onFrame(payload);
    }
    // Copy the partial frame: the chunk it sits in is not ours to keep.
    if (at < buf.length) this.pending = Buffer.from(buf.subarray(at));
  }
}
