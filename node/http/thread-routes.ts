import Type from 'typebox';
import { defineRoute, isApiError, type AnyRoute } from '../../common/index.ts';
import { MessageSchema, PAGE } from '../chat/index.ts';
import type { NodeContext } from '../context.ts';

const Uuid = Type.String({ format: 'uuid' });
const ThreadParams = Type.Object({ chatId: Uuid, parentId: Uuid });
const ThreadQuery = Type.Object({
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE.maxSize, description: `default ${PAGE.defaultSize}, minimum 1, maximum ${PAGE.maxSize}` })),
  lastReply: Type.Optional(Type.Union([Type.Literal(''), Uuid], { description: 'Id of the oldest reply of the previous page; the page holds the replies before it. Empty or absent: from the newest.' })),
});

/** A message's thread (README, "Threads"): its replies, paged as history is. */
export function threadRoutes(ctx: NodeContext): AnyRoute[] {
  const auth = { verify: ctx.authenticateUser, security: 'userJwt', responses: { 403: { description: 'The user is banned (USER_BANNED)' }, 429: { description: "Over this user's request budget (RATE_LIMITED, with Retry-After)" } } };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/chats/:chatId/threads/:parentId/messages',
      operationId: 'getThread',
      summary: `A message's replies, newest first: size default ${PAGE.defaultSize}, maximum ${PAGE.maxSize}; each reply's seq is its place in the thread`,
      tags: ['messages'],
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
