import type { WebSocket } from 'uWebSockets.js';
import { ApiError } from '../../common/index.ts';
import type { GatewayDeps, SocketState } from './gateway.ts';
import { REALTIME_LIMITS } from './limits.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_CHATS = 1000;

/** `resume=<chatId>:<seq>,<chatId>:<seq>` from the connect URL: the last seq seen per chat. */
export function parseResume(value: string | null): Map<string, number> | ApiError {
  const out = new Map<string, number>();
  if (!value) return out;
  const parts = value.split(',');
  if (parts.length > MAX_CHATS) return new ApiError('VALIDATION_FAILED', `resume names at most ${MAX_CHATS} chats`);
  for (const part of parts) {
    const [chatId, seqText] = part.split(':');
    const seq = Number(seqText);
    if (!chatId || !UUID.test(chatId) || !Number.isSafeInteger(seq) || seq < 0) {
      return new ApiError('VALIDATION_FAILED', 'resume must be chatId:seq pairs separated by commas', { errors: [{ path: '/query/resume', message: `bad entry ${part.slice(0, 60)}` }] });
    }
    out.set(chatId.toLowerCase(), seq);
  }
  return out;
}

/**
 * Replays what a reconnecting client missed, exactly once. For each chat: read the messages after
 * the client's seq (memory or store), then, in one synchronous step, subscribe the socket to the
 * chat and send the replay plus anything published while reading. Events published after that step
 * arrive live; none before it do, so nothing is missed and nothing is sent twice. When more than
 * `resumeMessages` were missed the client gets `resume.gap` and pages history instead.
 */
export async function resume(deps: GatewayDeps, ws: WebSocket<SocketState>, from: Map<string, number>): Promise<void> {
  const c = ws.getUserData();
  const summary: Record<string, { fromSeq: number; toSeq: number; gap: boolean }> = {};
  for (const [chatId, afterSeq] of from) {
    const actor = await deps.actors.get(c.appId, chatId);
    if (c.closed) return;
    if (!actor || !actor.isMember(c.userId)) continue;
    const read = await actor.since(afterSeq, REALTIME_LIMITS.resumeMessages);
    if (c.closed) return;
    // --- synchronous from here: no event of this chat can be published in between ---
    deps.hub.subscribe(ws, chatId);
    const tail = actor.publishedSince(read.upTo);
    const toSeq = actor.publishedSeq;
    if (!read.complete || tail === undefined || read.messages.length + tail.length > REALTIME_LIMITS.resumeMessages) {
      deps.hub.send(ws, { type: 'resume.gap', chatId, fromSeq: afterSeq + 1, toSeq });
      summary[chatId] = { fromSeq: afterSeq + 1, toSeq, gap: true };
      continue;
    }
    for (const message of [...read.messages, ...tail]) deps.hub.send(ws, { type: 'message.new', chatId, seq: message.seq, message, replay: true });
    summary[chatId] = { fromSeq: afterSeq + 1, toSeq, gap: false };
  }
  // Chats the client named that it is not (or no longer) in are simply absent from the summary.
  deps.hub.send(ws, { type: 'resumed', chats: summary });
}
