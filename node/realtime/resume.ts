import type { WebSocket } from 'uWebSockets.js';
import { ApiError, type Logger } from '../../common/index.ts';
import type { ChatService, ResumeEntry, ResumePoint } from '../chat/index.ts';
import type { NodeStore } from '../store/index.ts';
import type { Connection, RealtimeHub } from './hub.ts';
import { connectionId } from './connection-id.ts';
import type { Replays } from './replays.ts';
import { REALTIME_LIMITS } from './limits.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type { ResumePoint } from '../chat/index.ts';

/** What a resume uses of the gateway's dependencies (the gateway passes its own, by shape). */
export interface ResumeDeps {
  hub: RealtimeHub;
  replays: Replays;
  chats: Pick<ChatService, 'replay'>;
  store: NodeStore;
  log: Logger;
}

const count = (text: string | undefined) => (text !== undefined && /^\d{1,15}$/.test(text) ? Number(text) : NaN);

/** `resume=<chatId>:<seq>[:<rev>],…` from the connect URL; undefined when it names no chat. */
export function parseResume(value: string | null): Map<string, ResumePoint> | undefined | ApiError {
  if (!value) return undefined;
  const out = new Map<string, ResumePoint>();
  const parts = value.split(',');
  if (parts.length > REALTIME_LIMITS.resumeChats) return new ApiError('VALIDATION_FAILED', `resume names at most ${REALTIME_LIMITS.resumeChats} chats`);
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

/**
 * `threads=<chatId>:<parentId>,…` from the connect URL: threads open from the start, each in a chat
 * the URL's `resume` names (their missed replies are replayed with it). Added to those resume
 * points; an error names the first bad entry.
 */
export function parseOpenThreads(value: string | null, resume: Map<string, ResumePoint> | undefined): ApiError | undefined {
  if (!value) return undefined;
  const parts = value.split(',');
  const bad = (message: string) => ApiError.field('VALIDATION_FAILED', '/query/threads', message);
  if (parts.length > REALTIME_LIMITS.openThreads) return new ApiError('OPEN_THREAD_LIMIT_REACHED', `threads names at most ${REALTIME_LIMITS.openThreads} threads`);
  for (const part of parts) {
    const [chatId, parentId, ...rest] = part.split(':');
    if (!chatId || !parentId || !UUID.test(chatId) || !UUID.test(parentId) || rest.length > 0) return bad(`entries are chatId:parentId, separated by commas; bad entry ${part.slice(0, 80)}`);
    const point = resume?.get(chatId.toLowerCase());
    if (!point) return bad(`names a thread of chat ${chatId}, which resume does not name`);
    const parent = parentId.toLowerCase();
    if (!point.threads?.includes(parent)) (point.threads ??= []).push(parent);
  }
  return undefined;
}

/**
 * Replays what a reconnecting client missed, exactly once, chat by chat: the chat's owner (this
 * node or another) prepares the replay and hands it over in order with the chat's live events; the
 * socket is subscribed to the chat in the same synchronous step as the replay is sent (see
 * prepareReplay). Chats the client named that it is not (or no longer) in are absent from the
 * `resumed` summary.
 */
export async function resume(deps: ResumeDeps, ws: WebSocket<Connection>, from: Map<string, ResumePoint>): Promise<void> {
  const c = ws.getUserData();
  const summary: Record<string, ResumeEntry> = {};
  for (const [chatId, point] of from) {
    const entry = await resumeChat(deps, ws, chatId, point);
    if (c.closed) return;
    if (entry) summary[chatId] = entry;
  }
  deps.hub.send(ws, { type: 'resumed', chats: summary });
}

function resumeChat(deps: ResumeDeps, ws: WebSocket<Connection>, chatId: string, point: ResumePoint): Promise<ResumeEntry | null> {
  const c = ws.getUserData();
  const connId = connectionId(c.connId);
  return new Promise((resolve) => {
    let settled = false;
    const settle = (entry: ResumeEntry | null) => {
      settled = true;
      clearTimeout(timer);
      release();
      resolve(entry);
    };
    const release = deps.replays.wait(c.appId, chatId, connId, ({ frames, entry }) => {
      if (settled) return;
      // Synchronous with the owner's publication order: subscribed from here on, replayed up to here.
      if (entry && !c.closed) {
        deps.hub.subscribe(ws, chatId);
        openThreads(deps.hub, ws, chatId, point);
        for (const frame of frames) deps.hub.send(ws, frame);
      }
      settle(entry);
    });
    // The owner, or the bus to it, cannot be reached: the client pages history instead.
    const fallBack = () => {
      if (settled) return;
      void pageInstead(deps, ws, chatId, point).then(
        (entry) => !settled && settle(entry),
        () => !settled && settle(null),
      );
    };
    const timer = setTimeout(fallBack, REALTIME_LIMITS.replayWaitMs);
    deps.replays
      .ready()
      .then(() => deps.chats.replay(c.appId, chatId, c.userId, point, { nodeId: deps.replays.nodeId, connId }, REALTIME_LIMITS.resumeMessages))
      .catch((error: unknown) => {
        deps.log.warn({ err: String(error), chatId }, 'replay failed; the client pages history');
        fallBack();
      });
  });
}

/** The threads of the chat the connect URL named (`?threads=`): open as the socket joins the chat. */
function openThreads(hub: RealtimeHub, ws: WebSocket<Connection>, chatId: string, point: ResumePoint): void {
  for (const parentId of point.threads ?? []) hub.openThread(ws, chatId, parentId, REALTIME_LIMITS.openThreads);
}

/** Subscribes the socket and tells the client to page what it missed from history. */
async function pageInstead(deps: ResumeDeps, ws: WebSocket<Connection>, chatId: string, point: ResumePoint): Promise<ResumeEntry | null> {
  const c = ws.getUserData();
  if (!(await deps.store.chats.member(c.appId, chatId, c.userId)) || c.closed) return null;
  deps.hub.subscribe(ws, chatId);
  openThreads(deps.hub, ws, chatId, point);
  // What is stored, not the numbers a writer took ahead: live delivery continues after toSeq.
  const { seq: toSeq, rev: toRev } = await deps.store.messages.newest(c.appId, chatId);
  const gap = toSeq > point.seq;
  if (gap) deps.hub.send(ws, { type: 'resume.gap', chatId, fromSeq: point.seq + 1, toSeq });
  return { fromSeq: point.seq + 1, toSeq, gap, toRev, stale: point.rev !== undefined && toRev > point.rev };
}
