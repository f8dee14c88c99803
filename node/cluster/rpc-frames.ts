import { Packr } from 'msgpackr';
import { errorCodes, type ErrorCode, type FieldProblem } from '../../common/index.ts';

/**
 * The wire format of node-to-node calls. A frame is a 4-byte big-endian length and a MessagePack
 * body; every body is one RpcMessage, a union on `type`.
 *
 * Handshake (nothing else is accepted before it completes):
 *   server → `hello`   its node id and a fresh nonce
 *   client → `auth`    its node id, its own fresh nonce, and a proof over both nonces and both ids
 *   server → `welcome` its proof over the same transcript (verified by the client)
 * Then the client sends `call`s, each with an id of its choosing, and the server answers each id
 * once: `ok` (or `part`s of a large result), `apiError`, `held` (another node writes the chat:
 * nothing ran here, and the call may go to that node), or `failed`.
 */
export type RpcMessage = Handshake | RpcCall | RpcReply;

export type Handshake =
  | { type: 'hello'; v: number; nodeId: string; nonce: Uint8Array }
  | { type: 'auth'; v: number; nodeId: string; nonce: Uint8Array; proof: Uint8Array }
  | { type: 'welcome'; proof: Uint8Array };

/** `budgetMs`: how long the caller still waits for the answer, measured when the call was sent. */
export type RpcCall = { type: 'call'; id: number; op: string; appId: string; chatId: string; args: unknown[]; budgetMs: number };

/**
 * Why a call did not run or did not finish, as the caller learns it:
 * - `unavailable`: a backend of the callee is down (the caller gets BackendUnavailableError); with
 *   `outcomeUnknown`, a write of the call was sent and may have been stored (OutcomeUnknownError).
 *   A flag rather than a reason of its own, so a node of the previous version still reads it;
 * - `overloaded`: the callee had too many calls in flight and did not run it (OverloadedError);
 * - `leaving`: the callee is shutting down and did not run it (NodeUnreachableError: go elsewhere);
 * - `expired`: the call's budget was spent when it arrived; it did not run;
 * - `internal`: anything else (logged on the callee).
 */
export type FailReason = 'unavailable' | 'overloaded' | 'leaving' | 'expired' | 'internal';

export type RpcReply =
  | { type: 'ok'; id: number; value: unknown }
  /** One piece of a packed result too large for one frame; the result is complete at `last`. */
  | { type: 'part'; id: number; data: Uint8Array; last: boolean }
  | { type: 'apiError'; id: number; code: ErrorCode; detail: string; extra: ApiErrorExtra }
  | { type: 'held'; id: number; holder: string; address?: string }
  | { type: 'failed'; id: number; reason: FailReason; retryAfterSeconds?: number; outcomeUnknown?: true };

export type ApiErrorExtra = { errors?: FieldProblem[]; retryAfterSeconds?: number };

// Plain MessagePack maps (no msgpackr records: each frame stands alone). `undefined` and Dates
// survive the trip, so arguments arrive as the caller passed them.
const packr = new Packr({ useRecords: false });

/** The frame of a message: its length and its body, in a buffer of its own. */
export function encodeFrame(message: RpcMessage): Buffer {
  // The packed bytes live in msgpackr's shared buffer until the next pack: copied at once.
  const body = packr.pack(message);
  const frame = Buffer.allocUnsafe(4 + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, 4);
  return frame;
}

export const packValue = (value: unknown): Buffer => Buffer.from(packr.pack(value));
export const unpackValue = (data: Uint8Array): unknown => packr.unpack(data);

/**
 * The message of a frame body, or undefined for anything that is not one of the shapes above
 * (undecodable bytes, an unknown type, a field of the wrong type). Never throws.
 */
export function decodeMessage(body: Uint8Array): RpcMessage | undefined {
  let m: unknown;
  try {
    m = packr.unpack(body);
  } catch {
    return undefined;
  }
  if (typeof m !== 'object' || m === null) return undefined;
  const r = m as Record<string, unknown>;
  switch (r.type) {
    case 'hello':
      return isVersion(r.v) && isId(r.nodeId) && isBytes(r.nonce) ? { type: 'hello', v: r.v, nodeId: r.nodeId, nonce: r.nonce } : undefined;
    case 'auth':
      return isVersion(r.v) && isId(r.nodeId) && isBytes(r.nonce) && isBytes(r.proof) ? { type: 'auth', v: r.v, nodeId: r.nodeId, nonce: r.nonce, proof: r.proof } : undefined;
    case 'welcome':
      return isBytes(r.proof) ? { type: 'welcome', proof: r.proof } : undefined;
    case 'call':
      if (!isCallId(r.id) || typeof r.op !== 'string' || typeof r.appId !== 'string' || typeof r.chatId !== 'string') return undefined;
      if (!Array.isArray(r.args) || typeof r.budgetMs !== 'number' || Number.isNaN(r.budgetMs)) return undefined;
      return { type: 'call', id: r.id, op: r.op, appId: r.appId, chatId: r.chatId, args: r.args as unknown[], budgetMs: r.budgetMs };
    case 'ok':
      return isCallId(r.id) ? { type: 'ok', id: r.id, value: r.value } : undefined;
    case 'part':
      return isCallId(r.id) && r.data instanceof Uint8Array && typeof r.last === 'boolean' ? { type: 'part', id: r.id, data: r.data, last: r.last } : undefined;
    case 'apiError':
      if (!isCallId(r.id) || typeof r.code !== 'string' || !Object.hasOwn(errorCodes, r.code) || typeof r.detail !== 'string') return undefined;
      return { type: 'apiError', id: r.id, code: r.code as ErrorCode, detail: r.detail, extra: apiErrorExtra(r.extra) };
    case 'held':
      if (!isCallId(r.id) || !isId(r.holder)) return undefined;
      return typeof r.address === 'string' && r.address.length <= 300 ? { type: 'held', id: r.id, holder: r.holder, address: r.address } : { type: 'held', id: r.id, holder: r.holder };
    case 'failed':
      if (!isCallId(r.id) || !isFailReason(r.reason)) return undefined;
      if (r.reason === 'unavailable' && r.outcomeUnknown === true) return { type: 'failed', id: r.id, reason: r.reason, outcomeUnknown: true };
      return typeof r.retryAfterSeconds === 'number' && r.retryAfterSeconds >= 0
        ? { type: 'failed', id: r.id, reason: r.reason, retryAfterSeconds: r.retryAfterSeconds }
        : { type: 'failed', id: r.id, reason: r.reason };
    default:
      return undefined;
  }
}

const FAIL_REASONS: ReadonlySet<unknown> = new Set<FailReason>(['unavailable', 'overloaded', 'leaving', 'expired', 'internal']);
const isFailReason = (v: unknown): v is FailReason => FAIL_REASONS.has(v);
const isVersion = (v: unknown): v is number => Number.isInteger(v);
const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 200;
const isBytes = (v: unknown): v is Uint8Array => v instanceof Uint8Array && v.length === 32;
const isCallId = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff;

function apiErrorExtra(v: unknown): ApiErrorExtra {
  if (typeof v !== 'object' || v === null) return {};
  const r = v as Record<string, unknown>;
  const extra: ApiErrorExtra = {};
  if (typeof r.retryAfterSeconds === 'number') extra.retryAfterSeconds = r.retryAfterSeconds;
  if (Array.isArray(r.errors)) {
    extra.errors = r.errors
      .filter((e): e is FieldProblem => typeof e === 'object' && e !== null && typeof (e as FieldProblem).path === 'string' && typeof (e as FieldProblem).message === 'string')
      .map((e) => ({ path: e.path, message: e.message }));
  }
  return extra;
}

/**
 * Splits a byte stream into frame bodies. A frame is handed over only once complete; a body is
 * copied only when it spans chunks. A length over `maxBytes` stops the reader for good: the
 * connection must be closed, since nothing after it can be trusted to be a frame boundary.
 */
export class FrameReader {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  /** Length of the body being read, or -1 while reading a length. */
  private need = -1;
  private failed = false;

  /** The largest body accepted; may be raised (after a handshake) or lowered at any time. */
  constructor(public maxBytes: number) {}

  /** Feeds bytes; calls `onFrame` for each complete body. Returns false once a frame was too large. */
  push(chunk: Buffer, onFrame: (body: Buffer) => void): boolean {
    if (this.failed) return false;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.need < 0) {
        if (this.buffered < 4) return true;
        const length = this.take(4).readUInt32BE(0);
        if (length > this.maxBytes) {
          this.failed = true;
          this.chunks.length = 0;
          return false;
        }
        this.need = length;
      }
      if (this.buffered < this.need) return true;
      const body = this.take(this.need);
      this.need = -1;
      onFrame(body);
    }
  }

  private take(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0);
    this.buffered -= n;
    const first = this.chunks[0]!;
    if (first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let offset = 0;
    while (offset < n) {
      const chunk = this.chunks[0]!;
      const k = Math.min(chunk.length, n - offset);
      chunk.copy(out, offset, 0, k);
      offset += k;
      if (k === chunk.length) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(k);
    }
    return out;
  }
}
