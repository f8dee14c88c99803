/**
 * The wire form of a publication, the same on every transport:
 *
 *   version (u8) | type (u8: 1 binary, 2 text) | origin length (u8) | origin (UTF-8) | payload
 *
 * A binary header rather than JSON: the payload (already JSON or MessagePack) passes through
 * without being parsed or re-encoded, and the type keeps a string a string. A frame of another
 * version is dropped, so a node of a newer protocol never feeds an older one what it cannot read;
 * a change of format takes a new version, and nodes accept both during a rolling upgrade.
 */
export const BUS_PROTOCOL_VERSION = 1;

export type Envelope =
  | { v: typeof BUS_PROTOCOL_VERSION; type: 'binary'; origin: string; payload: Uint8Array }
  | { v: typeof BUS_PROTOCOL_VERSION; type: 'text'; origin: string; payload: string };

const TYPE_BINARY = 1;
const TYPE_TEXT = 2;
const HEADER = 3;

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
  const frame = Buffer.allocUnsafe(HEADER + origin.length + body.length);
  frame[0] = envelope.v;
  frame[1] = type;
  frame[2] = origin.length;
  origin.copy(frame, HEADER);
  body.copy(frame, HEADER + origin.length);
  return frame;
}

/** The envelope in a frame, or undefined for another version, an unknown type, or a truncated frame. */
export function decodeEnvelope(frame: Buffer): Envelope | undefined {
  if (frame.length < HEADER || frame[0] !== BUS_PROTOCOL_VERSION) return undefined;
  const start = HEADER + frame[2]!;
  if (frame.length < start) return undefined;
  const origin = frame.toString('utf8', HEADER, start);
  switch (frame[1]) {
    case TYPE_BINARY:
      return { v: BUS_PROTOCOL_VERSION, type: 'binary', origin, payload: frame.subarray(start) };
    case TYPE_TEXT:
      return { v: BUS_PROTOCOL_VERSION, type: 'text', origin, payload: frame.toString('utf8', start) };
    default:
      return undefined;
  }
}
