import Type from 'typebox';
import { ApiError, defineRoute, type AnyRoute } from '../../common/index.ts';
import type { NodeContext } from '../context.ts';
import { ListQuery } from './schemas.ts';

/** Users one user may block at most (README, "Moderation"): bounds its partition and its list. */
export const BLOCKS_PER_USER = 1000;

const Uuid = Type.String({ format: 'uuid' });
const BlockBody = Type.Object({ userId: Uuid }, { additionalProperties: false });
const Block = Type.Object({ userId: Uuid, blockedAt: Type.String({ format: 'date-time' }) });
const BlockList = Type.Object({ blocks: Type.Array(Block), nextCursor: Type.Optional(Type.String()) });
const BlockParams = Type.Object({ userId: Uuid });

/** A user's blocks (user JWT): no direct chat, and no message in an existing one, between a user and one it blocks or that blocks it. */
export function blockRoutes(ctx: NodeContext): AnyRoute[] {
  const auth = { verify: ctx.authenticateUser, security: 'userJwt', responses: { 403: { description: 'The user is banned (USER_BANNED)' }, 429: { description: "Over this user's request budget (RATE_LIMITED, with Retry-After)" } } };
  const tags = ['users (browser, user JWT)'];
  const jwtErrors = { 401: { description: 'JWT missing, invalid or expired' } };
  return [
    defineRoute({
      method: 'POST',
      path: '/api/users/me/blocks',
      operationId: 'blockUser',
      summary: 'Block a user: no new direct chat between you, and neither of you sends into your direct chat (USER_BLOCKED); the blocked user is not told',
      tags,
      body: BlockBody,
      auth,
      responses: { 200: { description: 'Already blocked', schema: Block }, 201: { description: 'Blocked', schema: Block }, 400: { description: 'Invalid fields (you cannot block yourself)' }, ...jwtErrors, 403: { description: `You block ${BLOCKS_PER_USER} users already (BLOCK_LIMIT_REACHED)` }, 404: { description: 'No such user (USER_NOT_FOUND)' } },
      handler: async ({ body, auth }) => {
        if (body.userId === auth.userId) return new ApiError('VALIDATION_FAILED', 'you cannot block yourself', { errors: [{ path: '/body/userId', message: 'is yourself' }] });
        if (!(await ctx.store.users.get(auth.appId, body.userId))) return new ApiError('USER_NOT_FOUND', `no user ${body.userId} in this application`);
        const at = ctx.now().toISOString();
        const result = await ctx.store.moderation.block(auth.appId, auth.userId, body.userId, at, BLOCKS_PER_USER);
        if (result === 'full') return new ApiError('BLOCK_LIMIT_REACHED', `you block ${BLOCKS_PER_USER} users already; unblock one first`);
        if (result === 'exists') return { status: 200, body: (await ctx.store.moderation.blockOf(auth.appId, auth.userId, body.userId)) ?? { userId: body.userId, blockedAt: at } };
        ctx.blocksChanged(auth.appId, auth.userId, body.userId);
        return { status: 201, body: { userId: body.userId, blockedAt: at } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/users/me/blocks/:userId',
      operationId: 'unblockUser',
      summary: 'Unblock a user',
      tags,
      params: BlockParams,
      auth,
      responses: { 204: { description: 'Unblocked' }, 400: { description: 'userId is not a UUID' }, ...jwtErrors, 404: { description: 'You do not block this user (BLOCK_NOT_FOUND)' } },
      handler: async ({ params, auth }) => {
        if ((await ctx.store.moderation.unblock(auth.appId, auth.userId, params.userId)) === 'not-blocked') return new ApiError('BLOCK_NOT_FOUND', 'you do not block this user');
        ctx.blocksChanged(auth.appId, auth.userId, params.userId);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/users/me/blocks',
      operationId: 'listBlocks',
      summary: 'The users you block, by user id, a page at a time',
      tags,
      query: ListQuery,
      auth,
      responses: { 200: { description: 'A page of blocks', schema: BlockList }, 400: { description: 'Invalid size or cursor' }, ...jwtErrors },
      handler: async ({ query, auth }) => {
        const size = query.size ?? 50;
        const blocks = await ctx.store.moderation.blocks(auth.appId, auth.userId, query.cursor, size + 1);
        const page = blocks.slice(0, size);
        return { status: 200, body: { blocks: page, ...(blocks.length > size ? { nextCursor: page.at(-1)!.userId } : {}) } };
      },
    }),
  ];
}
