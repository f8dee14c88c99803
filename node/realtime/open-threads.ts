import type { WebSocket } from 'uWebSockets.js';
import { ApiError, isApiError } from '../../common/index.ts';
import type { ChatService, ResumePoint, ThreadState } from '../chat/index.ts';
import type { Connection, RealtimeHub } from './hub.ts';
import { REALTIME_LIMITS } from './limits.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `thread.open` (README, "Threads"): the thread is opened on the socket first, then the user's
 * state in it is read, so a reply announced between the two reaches the socket and the state
 * already counts it. A thread that is not one of the chat's is closed again with the error.
 */
export async function openThread(deps: { hub: RealtimeHub; chats: Pick<ChatService, 'threadState'> }, ws: WebSocket<Connection>, chatId: string, parentId: string): Promise<{ thread: ThreadState } | ApiError> {
  const c = ws.getUserData();
  const opened = deps.hub.openThread(ws, chatId, parentId, REALTIME_LIMITS.openThreads);
  if (opened === 'not-member') return new ApiError('CHAT_NOT_FOUND', 'no such chat, or you are not a member');
  if (opened === 'full') return new ApiError('OPEN_THREAD_LIMIT_REACHED', `a connection has at most ${REALTIME_LIMITS.openThreads} threads open: close one first`);
  const thread = await deps.chats.threadState({ appId: c.appId, userId: c.userId }, chatId, parentId);
  if (isApiError(thread)) {
    if (opened === 'opened') deps.hub.closeThread(ws, chatId, parentId);
    return thread;
  }
  return { thread };
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
