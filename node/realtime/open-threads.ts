import type { WebSocket } from 'uWebSockets.js';
import { ApiError, isApiError } from '../../common/index.ts';
import type { ChatService, ThreadState } from '../chat/index.ts';
import type { Connection, RealtimeHub } from './hub.ts';
import { REALTIME_LIMITS } from './limits.ts';

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
