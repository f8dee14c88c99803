import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TemplatedApp } from 'uWebSockets.js';
import { ApiError, BackendUnavailableError, readBody, type ErrorCode, type Logger } from '../../common/index.ts';

/** The path of node-to-node calls; refused unless signed with the cluster's key. */
export const RPC_PATH = '/internal/v1/op';
const MAX_BODY = 1 << 20;
const HEADER = 'x-cluster-signature';

/** An operation a node runs for another: the owner of a chat runs the chat's operations. */
export type RpcHandler = (appId: string, chatId: string, args: unknown[]) => Promise<unknown>;

/** The node could not be reached at all (nothing was sent): the call can go elsewhere. */
export class NodeUnreachableError extends Error {
  constructor(readonly url: string, options?: { cause?: unknown }) {
    super(`node ${url} is unreachable`, options);
  }
}

const sign = (secret: Buffer, body: string | Buffer) => createHmac('sha256', secret).update(body).digest('hex');

type Reply = { ok: unknown } | { error: { code: ErrorCode; detail: string; extra?: ApiError['extra'] } };

/**
 * Serves other nodes' calls on this node's port. The body is JSON `{op, appId, chatId, args}`
 * signed with an HMAC of the cluster key (every node derives it from the signing key they share
 * through the store), so only nodes of the cluster can call; the caller has already authenticated
 * and rate-limited the user. ApiErrors travel as values; a backend outage answers 503.
 */
export function attachRpc(app: TemplatedApp, secret: Buffer, handlers: Readonly<Record<string, RpcHandler>>, log: Logger): void {
  app.post(RPC_PATH, (res, req) => {
    const signature = req.getHeader(HEADER);
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    const reply = (status: string, body: Reply) => {
      if (aborted) return;
      res.cork(() => res.writeStatus(status).writeHeader('content-type', 'application/json').end(JSON.stringify(body)));
    };
    void readBody(res, MAX_BODY, () => aborted).then(async (read) => {
      if (read.kind !== 'ok') return reply('413 Payload Too Large', { error: { code: 'PAYLOAD_TOO_LARGE', detail: 'call too large' } });
      const expected = Buffer.from(sign(secret, read.body));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return reply('401 Unauthorized', { error: { code: 'TOKEN_INVALID', detail: 'not signed by a node of this cluster' } });
      }
      let call: { op?: unknown; appId?: unknown; chatId?: unknown; args?: unknown };
      try {
        call = JSON.parse(read.body.toString('utf8')) as typeof call;
      } catch {
        return reply('400 Bad Request', { error: { code: 'MALFORMED_JSON', detail: 'call is not JSON' } });
      }
      const handler = typeof call.op === 'string' && Object.hasOwn(handlers, call.op) ? handlers[call.op] : undefined;
      if (!handler || typeof call.appId !== 'string' || typeof call.chatId !== 'string' || !Array.isArray(call.args)) {
        return reply('400 Bad Request', { error: { code: 'VALIDATION_FAILED', detail: `unknown call ${String(call.op).slice(0, 40)}` } });
      }
      try {
        // JSON has no `undefined`: an absent optional argument arrives as null.
        const result = await handler(call.appId, call.chatId, call.args.map((a: unknown) => (a === null ? undefined : a)));
        if (result instanceof ApiError) return reply('200 OK', { error: { code: result.code, detail: result.detail, extra: result.extra } });
        return reply('200 OK', { ok: result ?? null });
      } catch (error) {
        if (error instanceof BackendUnavailableError) return reply('503 Service Unavailable', { error: { code: 'UNAVAILABLE', detail: 'a backend is unavailable; retry later' } });
        log.error({ err: error instanceof Error ? error.stack : String(error), op: call.op }, 'forwarded call failed');
        return reply('500 Internal Server Error', { error: { code: 'INTERNAL', detail: 'internal error' } });
      }
    });
  });
}

/**
 * Calls `op` on the node at `url`. Resolves with the result, or the ApiError the owner returned.
 * Rejects with NodeUnreachableError when no connection could be made (nothing ran there, so the
 * caller may try another node), and with BackendUnavailableError when the call was sent but its
 * outcome is unknown (the node died mid-call, or timed out): the client retries, with its
 * idempotency key where it has one.
 */
export async function callNode(url: string, secret: Buffer, op: string, appId: string, chatId: string, args: unknown[], timeoutMs = 10_000): Promise<unknown> {
  const body = JSON.stringify({ op, appId, chatId, args });
  let response: Response;
  try {
    response = await fetch(new URL(RPC_PATH, url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', [HEADER]: sign(secret, body) },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code === 'ECONNREFUSED' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'EHOSTUNREACH' || code === 'ENOTFOUND') throw new NodeUnreachableError(url, { cause: error });
    throw new BackendUnavailableError(`node ${url}`, { cause: error });
  }
  let reply: Reply;
  try {
    reply = (await response.json()) as Reply;
  } catch (error) {
    throw new BackendUnavailableError(`node ${url}`, { cause: error });
  }
  if ('ok' in reply) return reply.ok;
  if (response.status === 503) throw new BackendUnavailableError(`node ${url}`);
  if (response.status !== 200) throw new Error(`node ${url} refused ${op}: ${response.status} ${reply.error.code}`);
  return new ApiError(reply.error.code, reply.error.detail, reply.error.extra ?? {});
}

/** The key nodes sign their calls with, derived from the user-JWT signing key they all share. */
export function clusterSecret(privateKeyPem: string): Buffer {
  return createHmac('sha256', 'chat-service cluster calls').update(privateKeyPem).digest();
}
