import Type from 'typebox';
import { defineRoute, isApiError, type AnyRoute } from '../../common/index.ts';
import { INBOX_PAGE, InboxSchema, MessageSchema, PAGE, ThreadStateSchema } from '../chat/index.ts';
import type { NodeContext } from '../context.ts';

const Uuid = Type.String({ format: 'uuid' });
const ThreadParams = Type.Object({ chatId: Uuid, parentId: Uuid });
const ThreadQuery = Type.Object({
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE.maxSize, description: `default ${PAGE.defaultSize}, minimum 1, maximum ${PAGE.maxSize}` })),
  lastReply: Type.Optional(Type.Union([Type.Literal(''), Uuid], { description: 'Id of the oldest reply of the previous page; the page holds the replies before it. Empty or absent: from the newest.' })),
});

const ThreadRead = Type.Object({ seq: Type.Integer({ minimum: 0, description: 'The newest reply read (its seq in the thread); capped at the newest reply' }) }, { additionalProperties: false });
const InboxQuery = Type.Object({
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: INBOX_PAGE.maxSize, description: `default ${INBOX_PAGE.defaultSize}, minimum 1, maximum ${INBOX_PAGE.maxSize}` })),
  cursor: Type.Optional(Type.String({ maxLength: 400, description: "The previous page's nextCursor" })),
  unread: Type.Optional(Type.Boolean({ description: 'true: only threads with unread replies' })),
});
const StateResponse = { description: 'Your state in the thread', schema: ThreadStateSchema };
const errors = {
  400: { description: 'Invalid ids or fields' },
  401: { description: 'JWT missing, invalid or expired' },
  404: { description: 'No such chat or message, or you are not a member' },
};

/** A message's thread (README, "Threads"): its replies, paged as history is; following it; reading it; the inbox. */
export function threadRoutes(ctx: NodeContext): AnyRoute[] {
  const auth = { verify: ctx.authenticateUser, security: 'userJwt', responses: { 403: { description: 'The user is banned (USER_BANNED)' }, 429: { description: "Over this user's request budget (RATE_LIMITED, with Retry-After)" } } };
  const follow = (following: boolean) =>
    defineRoute({
      method: following ? 'PUT' : 'DELETE',
      path: '/api/chats/:chatId/threads/:parentId/follow',
      operationId: following ? 'followThread' : 'unfollowThread',
      summary: following ? 'Follow a thread: its replies count as unread for you and it enters your threads inbox' : 'Stop following a thread (replying or being mentioned in it follows it again)',
      tags: ['threads'],
      params: ThreadParams,
      auth,
      responses: { 200: StateResponse, ...errors },
      handler: async ({ params, auth }) => {
        const state = await ctx.chats.followThread(auth, params.chatId, params.parentId, following);
        return isApiError(state) ? state : { status: 200, body: state };
      },
    });
  return [
    defineRoute({
      method: 'GET',
      path: '/api/chats/:chatId/threads/:parentId',
      operationId: 'getThreadState',
      summary: 'Your state in a thread: whether you follow it, your read mark, its unread replies and mentions',
      tags: ['threads'],
      params: ThreadParams,
      auth,
      responses: { 200: StateResponse, ...errors },
      handler: async ({ params, auth }) => {
        const state = await ctx.chats.threadState(auth, params.chatId, params.parentId);
        return isApiError(state) ? state : { status: 200, body: state };
      },
    }),
    follow(true),
    follow(false),
    defineRoute({
      method: 'POST',
      path: '/api/chats/:chatId/threads/:parentId/read',
      operationId: 'markThreadRead',
      summary: "Mark a thread's replies read up to `seq` (never moves back; the chat's own read mark is apart)",
      tags: ['threads'],
      params: ThreadParams,
      body: ThreadRead,
      auth,
      responses: { 200: StateResponse, ...errors },
      handler: async ({ params, body, auth }) => {
        const state = await ctx.chats.markThreadRead(auth, params.chatId, params.parentId, body.seq);
        return isApiError(state) ? state : { status: 200, body: state };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/users/me/threads',
      operationId: 'getThreadInbox',
      summary: `Your threads inbox: the threads you follow in your chats, newest activity first, size default ${INBOX_PAGE.defaultSize}, maximum ${INBOX_PAGE.maxSize}`,
      tags: ['threads'],
      query: InboxQuery,
      auth,
      responses: { 200: { description: 'A page of your threads', schema: InboxSchema }, 400: { description: 'Invalid size or cursor' }, 401: errors[401] },
      handler: async ({ query, auth }) => {
        const inbox = await ctx.chats.threadInbox(auth, query.size ?? INBOX_PAGE.defaultSize, query.cursor, query.unread === true);
        return isApiError(inbox) ? inbox : { status: 200, body: inbox };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/chats/:chatId/threads/:parentId/messages',
      operationId: 'getThread',
      summary: `A message's replies, newest first: size default ${PAGE.defaultSize}, maximum ${PAGE.maxSize}; each reply's seq is its place in the thread`,
      tags: ['threads'],
      params: ThreadParams,
      query: ThreadQuery,
      auth,
      responses: {
        200: { description: 'A page of replies', schema: Type.Object({ messages: Type.Array(MessageSchema, { description: 'Newest first' }) }) },
        400: { description: 'Invalid ids, size or lastReply' },
        401: { description: 'JWT missing, invalid or expired' },
        404: { description: 'No such chat or message, or you are not a member' },
      },
      handler: async ({ params, query, auth }) => {
        const messages = await ctx.chats.thread(auth, params.chatId, params.parentId, query.size ?? PAGE.defaultSize, query.lastReply || undefined);
        return isApiError(messages) ? messages : { status: 200, body: { messages } };
      },
    }),
  ];
}
