import type { WebSocket } from 'uWebSockets.js';
import { ApiError } from '../../common/index.ts';
import type { ChangedMessage } from '../chat/actor.ts';
import type { GatewayDeps, SocketState } from './gateway.ts';
import { REALTIME_LIMITS } from './limits.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_CHATS = 1000;

/** Where a client stands in one chat: the last seq it saw and, when it knows it, the last revision. */
export interface ResumePoint {
  seq: number;
  rev?: number;
}

const count = (text: string | undefined) => (text !== undefined && /^\d{1,15}$/.test(text) ? Number(text) : NaN);

/** `resume=<chatId>:<seq>[:<rev>],…` from the connect URL. */
export function parseResume(value: string | null): Map<string, ResumePoint> | ApiError {
  const out = new Map<string, ResumePoint>();
  if (!value) return out;
  const parts = value.split(',');
  if (parts.length > MAX_CHATS) return new ApiError('VALIDATION_FAILED', `resume names at most ${MAX_CHATS} chats`);
  for (const part of parts) {
    const [chatId, seqText, revText, ...rest] = part.split(':');
    const seq = count(seqText);
    const rev = revText === undefined ? undefined : count(revText);
    if (!chatId || !UUID.test(chatId) || Number.isNaN(seq) || Number.isNaN(rev) || rest.length > 0) {
      return new ApiError('VALIDATION_FAILED', 'resume must be chatId:seq or chatId:seq:rev entries separated by commas', {
        errors: [{ path: '/query/resume', message: `bad entry ${part.slice(0, 60)}` }],
      });
    }
    out.set(chatId.toLowerCase(), rev === undefined ? { seq } : { seq, rev });
  }
  return out;
}

/** The newest state of each message among `lists`, in revision order. */
function latest(...lists: ChangedMessage[][]): ChangedMessage[] {
  const byId = new Map<string, ChangedMessage>();
  for (const c of lists.flat()) {
    const known = byId.get(c.message.messageId);
    if (!known || known.rev < c.rev) byId.set(c.message.messageId, c);
  }
  return [...byId.values()].sort((a, b) => a.rev - b.rev);
}

/**
 * Replays what a reconnecting client missed, exactly once. For each chat: read the messages after
 * the client's seq and, when it names a revision, the messages it had seen that changed after that
 * revision (memory or store); then, in one synchronous step, subscribe the socket to the chat and
 * send the replay plus anything published while reading. Events published after that step arrive
 * live; none before it do, so nothing is missed and nothing is sent twice.
 *
 * New messages come as `message.new` (seq order), changed ones as `message.updated` (revision
 * order), both in their current state and with `replay: true`. When more than `resumeMessages` new
 * messages were missed the client gets `resume.gap` and pages history; when more than that many
 * seen messages changed, `resumed` says `stale` and the client reloads what it shows.
 */
export async function resume(deps: GatewayDeps, ws: WebSocket<SocketState>, from: Map<string, ResumePoint>): Promise<void> {
  const c = ws.getUserData();
  const limit = REALTIME_LIMITS.resumeMessages;
  const summary: Record<string, { fromSeq: number; toSeq: number; gap: boolean; toRev: number; stale: boolean }> = {};
  for (const [chatId, point] of from) {
    const actor = await deps.actors.get(c.appId, chatId);
    if (c.closed) return;
    if (!actor || !actor.isMember(c.userId)) continue;
    const read = await actor.since(point.seq, limit);
    const changed = point.rev === undefined ? undefined : await actor.changesSince(point.rev, limit);
    if (c.closed) return;
    // --- synchronous from here: no event of this chat can be published in between ---
    deps.hub.subscribe(ws, chatId);
    const tail = actor.publishedSince(read.upTo);
    const changedTail = changed && actor.changesPublishedSince(changed.upToRev);
    const toSeq = actor.publishedSeq;
    const toRev = actor.publishedRev;
    const gap = !read.complete || tail === undefined || read.messages.length + tail.length > limit;
    if (gap) deps.hub.send(ws, { type: 'resume.gap', chatId, fromSeq: point.seq + 1, toSeq });
    else for (const m of actor.current([...read.messages, ...tail])) deps.hub.send(ws, { type: 'message.new', chatId, seq: m.seq, rev: m.rev, message: m.message, replay: true });
    let stale = false;
    if (changed) {
      stale = !changed.complete || changedTail === undefined;
      // Messages new to the client were just sent in their current state (or will be paged so).
      const updates = stale ? [] : latest(actor.current(changed.changes), changedTail!).filter((u) => u.seq <= point.seq);
      for (const u of updates) deps.hub.send(ws, { type: 'message.updated', chatId, seq: u.seq, rev: u.rev, message: u.message, replay: true });
    }
    summary[chatId] = { fromSeq: point.seq + 1, toSeq, gap, toRev, stale };
  }
  // Chats the client named that it is not (or no longer) in are simply absent from the summary.
  deps.hub.send(ws, { type: 'resumed', chats: summary });
}
