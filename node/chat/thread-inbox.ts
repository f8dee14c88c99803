import Type, { type Static } from 'typebox';
import { ApiError } from '../../common/index.ts';
import type { NodeStore, ThreadFollow } from '../store/index.ts';
import { MessageSchema } from './schemas.ts';
import { threadState, ThreadStateSchema } from './thread-follows.ts';
import { messageView } from './views.ts';

export const INBOX_PAGE = Object.freeze({ defaultSize: 20, maxSize: 50 });

export const InboxEntrySchema = Type.Object({ ...ThreadStateSchema.properties, parent: MessageSchema });
export const InboxSchema = Type.Object({
  threads: Type.Array(InboxEntrySchema, { description: 'Newest activity first' }),
  unreadThreads: Type.Integer({ description: 'Followed threads with unread replies, over the whole inbox' }),
  nextCursor: Type.Optional(Type.String({ description: 'Pass as `cursor` for the next page; absent on the last page' })),
});
export type Inbox = Static<typeof InboxSchema>;

/**
 * A user's threads inbox (README, "Threads"): the threads it follows in chats it is still in,
 * newest activity first, optionally only those with unread replies, `size` a page after `cursor`.
 * Reads the user's rows whole (at most CHAT_LIMITS.threadFollows, one partition) and its chats'
 * index, then the page's parents: O(follows + size).
 */
export async function threadInbox(store: NodeStore, appId: string, userId: string, size: number, cursor: string | undefined, unreadOnly: boolean): Promise<Inbox | ApiError> {
  const after = cursor === undefined ? undefined : positionOf(cursor);
  if (after === null) return new ApiError('VALIDATION_FAILED', '/query/cursor: not a cursor this route gave', { errors: [{ path: '/query/cursor', message: 'not a cursor this route gave' }] });
  const [rows, chats] = await Promise.all([store.threads.threadsOf(appId, userId), store.chats.chatsOf(appId, userId)]);
  const mine = new Set(chats);
  const followed = rows.filter((r) => r.following && mine.has(r.chatId));
  const unreadThreads = followed.filter((r) => r.lastSeq > r.readSeq).length;
  const listed = (unreadOnly ? followed.filter((r) => r.lastSeq > r.readSeq) : followed).sort(newestFirst);
  const from = after === undefined ? 0 : listed.findIndex((r) => newestFirst(r, after) > 0);
  const page = from < 0 ? [] : listed.slice(from, from + size);
  // The page's parents and mention counts, read at once (one round trip's wait on Cassandra, not one per thread).
  const entries = await Promise.all(
    page.map(async (row) => {
      const [parent, state] = await Promise.all([store.messages.get(appId, row.chatId, row.parentId), threadState(store, row)]);
      return parent ? { ...state, parent: messageView(parent, undefined, userId) } : undefined;
    }),
  );
  const threads = entries.filter((e) => e !== undefined);
  const last = page.at(-1);
  const more = from >= 0 && listed.length > from + size && last;
  return { threads, unreadThreads, ...(more ? { nextCursor: Buffer.from(JSON.stringify([last.activityAt, last.chatId, last.parentId])).toString('base64url') } : {}) };
}

type Position = Pick<ThreadFollow, 'activityAt' | 'chatId' | 'parentId'>;

/** Newest activity first; ties by chat, then parent, descending. */
function newestFirst(a: Position, b: Position): number {
  return b.activityAt.localeCompare(a.activityAt) || b.chatId.localeCompare(a.chatId) || b.parentId.localeCompare(a.parentId);
}

/** A cursor's position, or null for text that is none. */
function positionOf(cursor: string): Position | null {
  try {
    const [activityAt, chatId, parentId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof activityAt !== 'string' || typeof chatId !== 'string' || typeof parentId !== 'string') return null;
    return { activityAt, chatId, parentId };
  } catch {
    return null;
  }
}
