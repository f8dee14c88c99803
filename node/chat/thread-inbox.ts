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
 * replies)), then the rows of both at once (one read of the user's partition) with the listed
 * threads' parents (one read per chat and partition) and the membership of each chat named, then
 * the mention counts of unread ones: what a write that failed half-way left stale is checked
 * against the rows.
 */
export async function threadInbox(store: NodeStore, appId: string, userId: string, size: number, cursor: string | undefined, unreadOnly: boolean): Promise<Inbox | ApiError> {
  const after = cursor === undefined ? undefined : positionOf(cursor);
  if (after === null) return new ApiError('VALIDATION_FAILED', '/query/cursor: not a cursor this route gave', { errors: [{ path: '/query/cursor', message: 'not a cursor this route gave' }] });
  const member = memberships(store, appId, userId);
  // The unread set and the page are read side by side, then every row either names at once: a
  // few round trips in all, none per thread followed.
  const [unreadKeys, entries] = await Promise.all([store.threads.unread(appId, userId), unreadOnly ? undefined : store.threads.byActivity(appId, userId, after, size + 1)]);
  const positions = entries?.slice(0, size) ?? [];
  const keys = new Map<string, Key>();
  for (const k of [...unreadKeys, ...positions]) keys.set(keyOf(k), { chatId: k.chatId, parentId: k.parentId });
  // The page's parents are read with the rows (those of threads the rows leave out are dropped);
  // an unread-only page knows its threads only from the rows.
  const [rows, pageParents] = await Promise.all([current(store, appId, userId, [...keys.values()], member), parentsOf(store, appId, positions)]);
  const unread = unreadKeys.flatMap((k) => {
    const row = rows.get(keyOf(k));
    return row && row.lastSeq > row.readSeq ? [row] : [];
  });
  let listed: ThreadFollow[];
  let next: InboxPosition | undefined;
  if (unreadOnly) {
    const all = unread.filter((r) => after === undefined || newestFirst(r, after) > 0).sort(newestFirst);
    listed = all.slice(0, size);
    if (all.length > size) next = listed.at(-1)!;
  } else {
    // An entry is current when its row follows at its time (see ThreadStore). The next page
    // starts after the last entry read.
    listed = positions.flatMap((p) => {
      const row = rows.get(keyOf(p));
      return row && row.activityAt === p.activityAt ? [row] : [];
    });
    if (entries!.length > size) next = positions.at(-1)!;
  }
  const parents = unreadOnly ? await parentsOf(store, appId, listed) : pageParents;
  const threads = (
    await Promise.all(
      listed.map(async (row) => {
        const parent = parents.get(row.parentId);
        return parent ? { ...(await threadState(store, row)), parent: messageView(parent, undefined, userId) } : undefined;
      }),
    )
  ).filter((e) => e !== undefined);
  return { threads, unreadThreads: unread.length, ...(next ? { nextCursor: cursorOf(next) } : {}) };
}

const keyOf = (k: Key) => `${k.chatId}/${k.parentId}`;

/** The rows of these threads that follow, in chats the user is in, by key: one read of the rows, and each chat's membership once. */
async function current(store: NodeStore, appId: string, userId: string, keys: Key[], member: (chatId: string) => Promise<boolean>): Promise<Map<string, ThreadFollow>> {
  const [rows, inChat] = await Promise.all([store.threads.getMany(appId, userId, keys), Promise.all(keys.map((k) => member(k.chatId)))]);
  const out = new Map<string, ThreadFollow>();
  rows.forEach((row, i) => {
    if (row?.following === true && inChat[i]) out.set(keyOf(row), row);
  });
  return out;
}

/** The parents of these threads, by id: one read per chat (and partition) among them. */
async function parentsOf(store: NodeStore, appId: string, rows: readonly Key[]): Promise<Map<string, StoredMessage>> {
  const byChat = new Map<string, string[]>();
  for (const r of rows) byChat.set(r.chatId, [...(byChat.get(r.chatId) ?? []), r.parentId]);
  const out = new Map<string, StoredMessage>();
  await Promise.all(
    [...byChat].map(async ([chatId, ids]) => {
      for (const m of await store.messages.getMany(appId, chatId, ids)) if (m) out.set(m.id, m);
    }),
  );
  return out;
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
