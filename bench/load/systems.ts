/**
 * How the generator speaks to each system measured: the same actions (join a room, send a message
 * that every member of the room receives, get an acknowledgement) in each one's own protocol.
 *
 * - `chat`: this service. WebSocket `/ws?token=<user JWT>`, `message.send` acked once durable or
 *   refused with an `error` frame carrying its id and a code, `message.new` to every member; HTTP
 *   `POST /api/messages/{chatId}`.
 * - `uws`: bare uWebSockets.js pub/sub (bench/peers/uws.ts): no auth, no storage; the ceiling.
 * - `socketio`: Socket.IO 4 (bench/peers/socketio.ts), rooms over the websocket transport, spoken
 *   at the Engine.IO/Socket.IO packet level (`0` open, `40` connect, `2`/`3` ping/pong, `42` event,
 *   `43` ack) so the generator's cost is the same as for the others.
 */
export type SystemName = 'chat' | 'uws' | 'socketio';
export const SYSTEMS: SystemName[] = ['chat', 'uws', 'socketio'];

export interface ConnSpec {
  system: SystemName;
  /** The server's base URL (http://host:port). */
  base: string;
  /** The chat (or room) this connection sends to and receives from. */
  room: string;
  /** The user JWT (chat only). */
  token?: string;
  localAddress?: string;
  /** Whether this connection sends in fanout and sends runs. */
  sender?: boolean;
}

/** A frame that answers a send: an ack, or a refusal (an error frame) with its code. */
export interface Answer {
  /** The id of the send answered; -1 when the frame names none. */
  id: number;
  /** The error's code when the send was refused (`RATE_LIMITED`, `UNAVAILABLE`, …). */
  refused?: string;
}

export interface Protocol {
  url(spec: ConnSpec): string;
  /** What to send once the socket is open, before joining (Socket.IO's connect packet). */
  onOpenSend?(spec: ConnSpec, firstFrame: Buffer): string | undefined;
  /** Whether a frame says the connection has joined (chat: `ready`; uws: its hello; Socket.IO: `40`). */
  joined(payload: Buffer): boolean;
  /** A reply the protocol requires to a frame (Socket.IO's application-level ping). */
  reply?(payload: Buffer): string | undefined;
  send(room: string, id: number, content: string): string;
  /** Whether a frame is a message delivered to this member. */
  isDelivery(payload: Buffer): boolean;
  /** The send a frame answers, undefined if it is not an answer. The peers only ever ack. */
  answer(payload: Buffer): Answer | undefined;
  /** HTTP send: path and headers. */
  httpSend(spec: ConnSpec): { path: string; headers: Record<string, string> };
}

const startsWith = (payload: Buffer, prefix: Buffer) => payload.length >= prefix.length && payload.compare(prefix, 0, prefix.length, 0, prefix.length) === 0;
const digitsAt = (payload: Buffer, at: number): number => {
  let n = 0;
  let i = at;
  for (; i < payload.length; i++) {
    const c = payload[i]!;
    if (c < 48 || c > 57) break;
    n = n * 10 + (c - 48);
  }
  return i === at ? -1 : n;
};

const CHAT_READY = Buffer.from('{"v":1,"type":"ready"');
const CHAT_NEW = Buffer.from('{"v":1,"type":"message.new"');
const CHAT_ACK = Buffer.from('{"v":1,"type":"ack","id":"');
const CHAT_ERROR = Buffer.from('{"v":1,"type":"error"');

/**
 * An error frame (`{"v":1,"type":"error","id":"7","code":"RATE_LIMITED",…}`): parsed whole, since
 * the order of its fields is not part of the protocol and refusals are far rarer than acks.
 */
function chatRefusal(payload: Buffer): Answer {
  try {
    const frame = JSON.parse(payload.toString('utf8')) as { id?: unknown; code?: unknown };
    const id = typeof frame.id === 'string' && /^\d+$/.test(frame.id) ? Number(frame.id) : -1;
    return { id, refused: typeof frame.code === 'string' ? frame.code : 'UNKNOWN' };
  } catch {
    return { id: -1, refused: 'UNREADABLE' };
  }
}

const chat: Protocol = {
  url: (s) => `${s.base.replace(/^http/, 'ws')}/ws?token=${s.token}`,
  joined: (p) => startsWith(p, CHAT_READY),
  send: (room, id, content) => `{"type":"message.send","id":"${id}","chatId":"${room}","content":"${content}"}`,
  isDelivery: (p) => startsWith(p, CHAT_NEW),
  answer: (p) => (startsWith(p, CHAT_ACK) ? { id: digitsAt(p, CHAT_ACK.length) } : startsWith(p, CHAT_ERROR) ? chatRefusal(p) : undefined),
  httpSend: (s) => ({ path: `/api/messages/${s.room}`, headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' } }),
};

const UWS_HELLO = Buffer.from('{"hello"');
const UWS_MSG = Buffer.from('{"room"');
const UWS_ACK = Buffer.from('{"ack":');

const uws: Protocol = {
  url: (s) => `${s.base.replace(/^http/, 'ws')}/?room=${s.room}`,
  joined: (p) => startsWith(p, UWS_HELLO),
  send: (room, id, content) => `{"room":"${room}","id":${id},"content":"${content}"}`,
  isDelivery: (p) => startsWith(p, UWS_MSG),
  answer: (p) => (startsWith(p, UWS_ACK) ? { id: digitsAt(p, UWS_ACK.length) } : undefined),
  httpSend: (s) => ({ path: `/rooms/${s.room}/messages`, headers: { 'content-type': 'application/json' } }),
};

const SIO_OPEN = Buffer.from('0{');
const SIO_CONNECTED = Buffer.from('40');
const SIO_PING = Buffer.from('2');
const SIO_MSG = Buffer.from('42["msg"');
const SIO_ACK = Buffer.from('43');

const socketio: Protocol = {
  url: (s) => `${s.base.replace(/^http/, 'ws')}/socket.io/?EIO=4&transport=websocket`,
  onOpenSend: (s, first) => (startsWith(first, SIO_OPEN) ? `40{"room":"${s.room}"}` : undefined),
  joined: (p) => startsWith(p, SIO_CONNECTED),
  reply: (p) => (p.length === 1 && startsWith(p, SIO_PING) ? '3' : undefined),
  send: (room, id, content) => `42${id}["send",{"room":"${room}","content":"${content}"}]`,
  isDelivery: (p) => startsWith(p, SIO_MSG),
  answer: (p) => (startsWith(p, SIO_ACK) ? { id: digitsAt(p, SIO_ACK.length) } : undefined),
  httpSend: (s) => ({ path: `/rooms/${s.room}/messages`, headers: { 'content-type': 'application/json' } }),
};

export const PROTOCOLS: Record<SystemName, Protocol> = { chat, uws, socketio };

const CONTENT_MARK = Buffer.from('"content":"t');

/**
 * The intended send time a delivered message carries (its content is `t<ms since epoch>`, maybe
 * followed by a space and text), or undefined. Found by a byte search, not a JSON parse: the
 * generator reads every delivered frame.
 */
export function sentAt(payload: Buffer): number | undefined {
  const at = payload.indexOf(CONTENT_MARK);
  if (at < 0) return undefined;
  const from = at + CONTENT_MARK.length;
  const quote = payload.indexOf(34, from); // closing quote
  const space = payload.indexOf(32, from);
  const end = space >= 0 && (quote < 0 || space < quote) ? space : quote;
  const value = Number(payload.toString('latin1', from, end < 0 ? from + 20 : end));
  return Number.isFinite(value) ? value : undefined;
}
