/**
 * The wire form of a publication: version (1 byte), origin node id length (1 byte), origin node id
 * (UTF-8), payload. Binary, so MessagePack or JSON payloads pass through untouched; the origin lets
 * a node drop its own publications.
 */
export const ENVELOPE_VERSION = 1;

export function wrap(nodeId: string, payload: Uint8Array): Buffer {
  const id = Buffer.from(nodeId, 'utf8');
  if (id.length > 255) throw new RangeError('node id longer than 255 bytes');
  return Buffer.concat([Buffer.from([ENVELOPE_VERSION, id.length]), id, payload]);
}

/** The origin and payload, or undefined for a frame of another version or a truncated one. */
export function unwrap(frame: Buffer): { origin: string; payload: Uint8Array } | undefined {
  if (frame.length < 2 || frame[0] !== ENVELOPE_VERSION) return undefined;
  const length = frame[1]!;
  if (frame.length < 2 + length) return undefined;
  return { origin: frame.subarray(2, 2 + length).toString('utf8'), payload: frame.subarray(2 + length) };
}
