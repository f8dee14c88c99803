import type { ChatEvent, ReplayTarget, ResumeEntry, UserEvent } from '../chat/index.ts';

/**
 * What nodes send each other on the bus, as JSON: on a chat's topic its events (`e`), its threads'
 * events with who follows the thread (`t`; older nodes ignore them), and replays
 * for a resuming socket (`r`); on a user's topic the user's events, the moves of its connections
 * into or out of a chat (`m`), and the end of the user (`x`: deleted, close its sockets).
 * A replay rides the chat's topic so that it reaches the socket's node in order with the chat's
 * events: everything published before it is in the replay, everything after arrives live.
 */
export type ChatWire =
  | { t: 'e'; e: ChatEvent }
  | { t: 'f'; frames: string[]; rev?: number }
  /** A thread's event (EventSink.threadEvent): its JSON frame, for the thread's followers and openers. */
  | { t: 't'; parentId: string; followers: string[]; frame: string; rev?: number }
  | { t: 'r'; to: ReplayTarget; frames: object[]; entry: ResumeEntry | null };
export type UserWire = { t: 'e'; e: UserEvent } | { t: 'm'; chatId: string; member: boolean } | { t: 'x' };

export const encodeWire = (message: ChatWire | UserWire): string => JSON.stringify(message);

/** First byte of a chat's event frames on the bus (binary: JSON text never starts with it). */
const FRAMES = 0x46;
/** The same, led by the highest revision among the frames (u64, big-endian). */
const REV_FRAMES = 0x52;

/**
 * A chat's events as the JSON frames its sockets receive, in order, in one binary message:
 * `F` then, per frame, its UTF-8 length (u32, big-endian) and bytes. A receiving node hands each
 * frame to its sockets as it is: nothing is parsed or encoded again. With `rev` (the highest
 * revision the frames carry) the message starts `R` and that number, so a node can tell frames
 * older than what its sockets already have without reading them (ClusterEvents).
 */
export function encodeFrames(frames: readonly string[], rev?: number): Buffer {
  const bodies = frames.map((f) => Buffer.from(f, 'utf8'));
  const head = rev === undefined ? 1 : 9;
  const out = Buffer.allocUnsafe(head + bodies.reduce((n, b) => n + 4 + b.length, 0));
  out[0] = rev === undefined ? FRAMES : REV_FRAMES;
  if (rev !== undefined) {
    out.writeUInt32BE(Math.floor(rev / 2 ** 32), 1);
    out.writeUInt32BE(rev >>> 0, 5);
  }
  let at = head;
  for (const b of bodies) {
    out.writeUInt32BE(b.length, at);
    b.copy(out, at + 4);
    at += 4 + b.length;
  }
  return out;
}

function decodeFrames(payload: Uint8Array, head: number): string[] | undefined {
  const buf = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const frames: string[] = [];
  for (let at = head; at < buf.length; ) {
    if (at + 4 > buf.length) return undefined;
    const length = buf.readUInt32BE(at);
    if (at + 4 + length > buf.length) return undefined;
    frames.push(buf.toString('utf8', at + 4, at + 4 + length));
    at += 4 + length;
  }
  return frames;
}

/** The message, or undefined for anything this version does not know (a newer node's). */
export function decodeChatWire(payload: Uint8Array | string): ChatWire | undefined {
  if (typeof payload !== 'string' && payload[0] === FRAMES) {
    const frames = decodeFrames(payload, 1);
    return frames ? { t: 'f', frames } : undefined;
  }
  if (typeof payload !== 'string' && payload[0] === REV_FRAMES) {
    if (payload.length < 9) return undefined;
    const buf = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    const frames = decodeFrames(payload, 9);
    return frames ? { t: 'f', frames, rev: buf.readUInt32BE(1) * 2 ** 32 + buf.readUInt32BE(5) } : undefined;
  }
  const m = parse(payload);
  if (m?.t === 'e' && typeof m.e === 'object' && m.e !== null) return m as ChatWire;
  if (m?.t === 't' && typeof m.parentId === 'string' && typeof m.frame === 'string' && Array.isArray(m.followers) && m.followers.every((f) => typeof f === 'string') && (m.rev === undefined || typeof m.rev === 'number')) return m as ChatWire;
  if (m?.t === 'r' && typeof m.to === 'object' && m.to !== null && Array.isArray(m.frames)) return m as ChatWire;
  return undefined;
}

export function decodeUserWire(payload: Uint8Array | string): UserWire | undefined {
  const m = parse(payload);
  if (m?.t === 'e' && typeof m.e === 'object' && m.e !== null) return m as UserWire;
  if (m?.t === 'm' && typeof m.chatId === 'string' && typeof m.member === 'boolean') return m as UserWire;
  if (m?.t === 'x') return { t: 'x' };
  return undefined;
}

function parse(payload: Uint8Array | string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(typeof payload === 'string' ? payload : Buffer.from(payload).toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
