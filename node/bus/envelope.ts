/**
 * The wire form of a publication, the same on every transport:
 *
 *   version (u8) | type (u8: 1 binary, 2 text) | origin length (u8) | origin (UTF-8)
 *     | number (u64, version 2 only) | payload
 *
 * A binary header rather than JSON: the payload (already JSON or MessagePack) passes through
 * without being parsed or re-encoded, and the type keeps a string a string. `number` increases
 * with every publication of its origin (see BaseBus), so a receiver can drop a frame that is not
 * newer than one it already has from that origin on that channel: the backlog of a connection
 * that was cut off and replaced, arriving after what the new one brought. A frame of another
 * version is dropped, so a node of a newer protocol never feeds an older one what it cannot read;
 * a change of format takes a new version, and nodes accept both during a rolling upgrade (version
 * 1, without a number, is still read: its frames are not checked).
 */
export const BUS_PROTOCOL_VERSION = 2;

type Versioned = { v: typeof BUS_PROTOCOL_VERSION; number: number } | { v: 1; number?: undefined };
export type Envelope = Versioned & ({ type: 'binary'; origin: string; payload: Uint8Array } | { type: 'text'; origin: string; payload: string });

const TYPE_BINARY = 1;
const TYPE_TEXT = 2;
const HEADER = 3;
const NUMBER_BYTES = 8;

export function encodeEnvelope(envelope: Envelope): Buffer {
  const origin = Buffer.from(envelope.origin, 'utf8');
  if (origin.length > 255) throw new RangeError('node id longer than 255 bytes');
  let type: number;
  let body: Buffer;
  switch (envelope.type) {
    case 'binary':
      type = TYPE_BINARY;
      body = Buffer.from(envelope.payload.buffer, envelope.payload.byteOffset, envelope.payload.byteLength);
      break;
    case 'text':
      type = TYPE_TEXT;
      body = Buffer.from(envelope.payload, 'utf8');
      break;
    default:
      return envelope satisfies never;
  }
  // One allocation; the payload is copied, so the publisher may reuse its buffer after publish().
  const numbered = envelope.v === BUS_PROTOCOL_VERSION;
  const start = HEADER + origin.length + (numbered ? NUMBER_BYTES : 0);
  const frame = Buffer.allocUnsafe(start + body.length);
  frame[0] = envelope.v;
  frame[1] = type;
  frame[2] = origin.length;
  origin.copy(frame, HEADER);
  if (numbered) {
    frame.writeUInt32BE(Math.floor(envelope.number / 2 ** 32), HEADER + origin.length);
    frame.writeUInt32BE(envelope.number >>> 0, HEADER + origin.length + 4);
  }
  body.copy(frame, start);
  return frame;
}

/** The envelope in a frame, or undefined for another version, an unknown type, or a truncated frame. */
export function decodeEnvelope(frame: Buffer): Envelope | undefined {
  if (frame.length < HEADER || (frame[0] !== BUS_PROTOCOL_VERSION && frame[0] !== 1)) return undefined;
  const originEnd = HEADER + frame[2]!;
  const numbered = frame[0] === BUS_PROTOCOL_VERSION;
  const start = originEnd + (numbered ? NUMBER_BYTES : 0);
  if (frame.length < start) return undefined;
  const origin = frame.toString('utf8', HEADER, originEnd);
  const version: Versioned = numbered ? { v: BUS_PROTOCOL_VERSION, number: frame.readUInt32BE(originEnd) * 2 ** 32 + frame.readUInt32BE(originEnd + 4) } : { v: 1 };
  switch (frame[1]) {
    case TYPE_BINARY:
      return { ...version, type: 'binary', origin, payload: frame.subarray(start) };
    case TYPE_TEXT:
      return { ...version, type: 'text', origin, payload: frame.toString('utf8', start) };
    default:
      return undefined;
  }
}
