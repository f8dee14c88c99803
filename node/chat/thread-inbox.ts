import Type, { type Static } from 'typebox';
import { ApiError } from '../../common/index.ts';
import type { InboxPosition, NodeStore, StoredMessage, ThreadFollow } from '../store/index.ts';
import { MessageSchema } from './schemas.ts';
import { threadState, ThreadStateSchema } from './thread-follows.ts';
import { messageView } from './views.ts';

export const INBOX_PAGE = Object.freeze({ defaultSize: 20, maxSize: 50 });

export const InboxEntrySchema = Type.Object({ ...ThreadStateSchema.properties, parent: MessageSchema });
export const InboxSchema = Type.Object({
  threads: Type.Array(InboxEntrySchema, { description: 'Newest activity first; a page may hold fewer than `size` (threads of chats you left are left out)' }),
  unreadThreads: Type.Integer({ description: 'Followed threads with unread replies, over the whole inbox' }),
  nextCursor: Type.Optional(Type.String({ description: 'Pass as `cursor` for the next page; absent on the last page' })),
});
export type Inbox = Static<typeof InboxSchema>;

type Key = { chatId: string; parentId: string };

/**
 * A user's threads inbox (README, "Threads"): the threads it follows in chats it is in, newest
 * activity first, `size` a page after `cursor`; with `unreadOnly`, those with unread replies.
 * Reads the activity index for the page (O(size)) and the unread set (O(threads with unread
 * replies)), then each listed thread's row, parent and mention count, and the membership of
 * each chat named: what a write that failed half-way left stale is checked against the rows.
 */
export async function threadInbox(store: NodeStore, appId: string, userId: string, size: number, cursor: string | undefined, unreadOnly: boolean): Promise<Inbox | ApiError> {
  const after = cursor === undefined ? undefined : positionOf(cursor);
  if (after === null) return new ApiError('VALIDATION_FAILED', '/query/cursor: not a cursor this route gave', { errors: [{ path: '/query/cursor', message: 'not a cursor this route gave' }] });
  const member = memberships(store, appId, userId);
  // The unread set and the page are read side by side: a few round trips in all, none per thread followed.
  const unreadRead = store.threads
    .unread(appId, userId)
    .then((keys) => current(store, appId, userId, keys, member))
    .then((rows) => rows.filter((r) => r.lastSeq > r.readSeq));
  let listed: Promise<{ rows: ThreadFollow[]; parents?: Map<string, StoredMessage | undefined>; next?: InboxPosition }>;
  if (unreadOnly) {
    listed = unreadRead.then((unread) => {
      const all = unread.filter((r) => after === undefined || newestFirst(r, after) > 0).sort(newestFirst);
      const rows = all.slice(0, size);
      return all.length > size ? { rows, next: rows.at(-1)! } : { rows };
    });
  } else {
    listed = store.threads.byActivity(appId, userId, after, size + 1).then(async (entries) => {
      const positions = entries.slice(0, size);
      const parents = new Map<string, StoredMessage | undefined>();
      // Each entry's row, chat membership and parent at once; an entry is current when its row
      // follows at its time (see ThreadStore). The next page starts after the last entry read.
      const rows = await current(store, appId, userId, positions, member, async (p) => void parents.set(p.parentId, await store.messages.get(appId, p.chatId, p.parentId)));
      const kept = rows.filter((r) => positions.some((p) => p.chatId === r.chatId && p.parentId === r.parentId && p.activityAt === r.activityAt));
      return entries.length > size ? { rows: kept, parents, next: positions.at(-1)! } : { rows: kept, parents };
    });
  }
  const [unread, page] = await Promise.all([unreadRead, listed]);
  const threads = (
    await Promise.all(
      page.rows.map(async (row) => {
        const [parent, state] = await Promise.all([page.parents?.get(row.parentId) ?? store.messages.get(appId, row.chatId, row.parentId), threadState(store, row)]);
        return parent ? { ...state, parent: messageView(parent, undefined, userId) } : undefined;
      }),
    )
  ).filter((e) => e !== undefined);
  return { threads, unreadThreads: unread.length, ...(page.next ? { nextCursor: cursorOf(page.next) } : {}) };
}

/**
 * The rows of these threads that follow, in chats the user is in: each row and its chat's
 * membership read at once (with `also`, when given, for each key).
 */
async function current(store: NodeStore, appId: string, userId: string, keys: Key[], member: (chatId: string) => Promise<boolean>, also?: (k: Key) => Promise<void>): Promise<ThreadFollow[]> {
  const found = await Promise.all(
    keys.map(async (k) => {
      const [row, inChat] = await Promise.all([store.threads.get(appId, userId, k.chatId, k.parentId), member(k.chatId), also?.(k)]);
      return row?.following === true && inChat ? row : undefined;
    }),
  );
  return found.filter((r) => r !== undefined);
}

/** Whether the user is in a chat, each chat asked once. */
function memberships(store: NodeStore, appId: string, userId: string): (chatId: string) => Promise<boolean> {
  const asked = new Map<string, Promise<boolean>>();
  return (chatId) => {
    let known = asked.get(chatId);
    if (!known) asked.set(chatId, (known = store.chats.member(appId, chatId, userId).then((m) => m !== undefined)));
    return known;
  };
}

/** Newest activity first; ties by chat, then parent, descending: the stores' order (by code unit, as they sort these ASCII keys). */
function newestFirst(a: InboxPosition, b: InboxPosition): number {
  const by = (x: string, y: string) => (x < y ? 1 : x > y ? -1 : 0);
  return by(a.activityAt, b.activityAt) || by(a.chatId, b.chatId) || by(a.parentId, b.parentId);
}

const cursorOf = (p: InboxPosition) => Buffer.from(JSON.stringify([p.activityAt, p.chatId, p.parentId])).toString('base64url');

/** A cursor's position, or null for text that is none. */
function positionOf(cursor: string): InboxPosition | null {
  try {
    const [activityAt, chatId, parentId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof activityAt !== 'string' || typeof chatId !== 'string' || typeof parentId !== 'string') return null;
    return { activityAt, chatId, parentId };
  } catch {
    return null;
  }
}
