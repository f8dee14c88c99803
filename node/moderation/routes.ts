import type { Static } from 'typebox';
import { v7 as uuidv7 } from 'uuid';
import { ApiError, defineRoute, type AnyRoute } from '../../common/index.ts';
import type { NodeContext } from '../context.ts';
import type { ModerationAction, UserBan } from '../store/index.ts';
import { BLOCKLIST_LIMITS, BLOCKLIST_MAX_BODY_BYTES, BlocklistBody, BlocklistView } from '../../common/moderation/index.ts';
import { Action, ActionList, Ban, BanBody, BanList, BanParams, ListQuery } from './schemas.ts';

const banView = (b: UserBan): Static<typeof Ban> => ({ userId: b.userId, ...(b.reason !== undefined ? { reason: b.reason } : {}), ...(b.expiresAt !== undefined ? { expiresAt: b.expiresAt } : {}), createdAt: b.createdAt, bannedBy: b.by });
const actionView = (a: ModerationAction): Static<typeof Action> => ({ actionId: a.id, at: a.at, action: a.action, ...(a.userId !== undefined ? { userId: a.userId } : {}), ...(a.chatId !== undefined ? { chatId: a.chatId } : {}), ...(a.messageId !== undefined ? { messageId: a.messageId } : {}), by: a.by, ...(a.reason !== undefined ? { reason: a.reason } : {}), ...(a.expiresAt !== undefined ? { expiresAt: a.expiresAt } : {}) });

/**
 * Bans a user from the application (replacing a ban in force) and records it: its sockets close on
 * every node, and the webhook event is out before the caller answers (an acknowledged ban always
 * has its event).
 */
export async function banUser(ctx: NodeContext, appId: string, userId: string, by: string, reason: string | undefined, expiresAt: string | undefined, review?: { chatId: string; messageId: string }): Promise<Static<typeof Ban>> {
  const now = ctx.now().toISOString();
  const ban: UserBan = { appId, userId, ...(reason !== undefined ? { reason } : {}), ...(expiresAt ? { expiresAt } : {}), createdAt: now, by };
  // A ban from a flag's review is logged as that review, with the flagged message.
  const action = review ? ({ action: 'flag.banned', ...review } as const) : ({ action: 'user.banned' } as const);
  await ctx.store.moderation.ban(ban, { appId, id: uuidv7(), at: now, ...action, userId, by, ...(reason !== undefined ? { reason } : {}), ...(expiresAt ? { expiresAt } : {}) });
  ctx.moderated(appId, userId, true);
  await ctx.webhooks?.emit(appId, [{ type: 'user.banned', data: banView(ban) }]);
  return banView(ban);
}

/** The backend's moderation routes (API key): bans, the blocklist and the moderation log (README, "Moderation"). */
export function moderationRoutes(ctx: NodeContext): AnyRoute[] {
  const auth = { verify: ctx.authenticateApiKey, security: 'apiKey' };
  const tags = ['moderation (server, API key)'];
  const keyErrors = { 401: { description: 'API key missing, invalid, revoked or for another cluster' } };
  return [
    defineRoute({
      method: 'POST',
      path: '/api/moderation/bans',
      operationId: 'banUser',
      summary: 'Ban a user from the application: its sockets close (4502) on every node, and its sign-in, refresh and every request are refused (USER_BANNED) until the ban lifts',
      tags,
      body: BanBody,
      auth,
      responses: { 201: { description: 'Banned (a ban in force is replaced)', schema: Ban }, 400: { description: 'Invalid fields (expiresAt must be in the future)' }, ...keyErrors, 404: { description: 'No such user (USER_NOT_FOUND)' } },
      handler: async ({ body, auth }) => {
        const now = ctx.now();
        if (body.expiresAt !== undefined && !(Date.parse(body.expiresAt) > now.getTime())) {
          return new ApiError('VALIDATION_FAILED', 'expiresAt must be in the future', { errors: [{ path: '/body/expiresAt', message: 'must be a time in the future' }] });
        }
        if (!(await ctx.store.users.get(auth.appId, body.userId))) return new ApiError('USER_NOT_FOUND', `no user ${body.userId} in this application`);
        const expiresAt = body.expiresAt === undefined ? undefined : new Date(body.expiresAt).toISOString();
        const ban = await banUser(ctx, auth.appId, body.userId, `apiKey:${auth.keyId}`, body.reason, expiresAt);
        return { status: 201, body: ban };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/moderation/bans/:userId',
      operationId: 'unbanUser',
      summary: 'Lift a user’s ban: its sign-in, refresh and requests work again',
      tags,
      params: BanParams,
      auth,
      responses: { 204: { description: 'Lifted' }, 400: { description: 'userId is not a UUID' }, ...keyErrors, 404: { description: 'The user has no ban in force (BAN_NOT_FOUND)' } },
      handler: async ({ params, auth }) => {
        const now = ctx.now().toISOString();
        const action: ModerationAction = { appId: auth.appId, id: uuidv7(), at: now, action: 'user.unbanned', userId: params.userId, by: `apiKey:${auth.keyId}` };
        if ((await ctx.store.moderation.unban(auth.appId, params.userId, action, now)) === 'not-banned') return new ApiError('BAN_NOT_FOUND', 'this user has no ban in force');
        ctx.moderated(auth.appId, params.userId, false);
        await ctx.webhooks?.emit(auth.appId, [{ type: 'user.unbanned', data: { userId: params.userId, unbannedBy: action.by } }]);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/moderation/bans',
      operationId: 'listBans',
      summary: 'The bans in force, by user id, a page at a time',
      tags,
      query: ListQuery,
      auth,
      responses: { 200: { description: 'A page of bans', schema: BanList }, 400: { description: 'Invalid size or cursor' }, ...keyErrors },
      handler: async ({ query, auth }) => {
        const size = query.size ?? 50;
        const bans = await ctx.store.moderation.bans(auth.appId, ctx.now().toISOString(), query.cursor, size + 1);
        const page = bans.slice(0, size);
        return { status: 200, body: { bans: page.map(banView), ...(bans.length > size ? { nextCursor: page.at(-1)!.userId } : {}) } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/moderation/blocklist',
      operationId: 'getBlocklist',
      summary: 'The application’s blocklist: words and phrases refused (`block`) or starred out (`mask`) in sends and edits',
      tags,
      auth,
      responses: { 200: { description: 'The blocklist (no entries until one is set)', schema: BlocklistView }, ...keyErrors },
      handler: async ({ auth }) => ({ status: 200, body: await ctx.blocklists.get(auth.appId) }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/moderation/blocklist',
      operationId: 'setBlocklist',
      summary: `Replace the application’s blocklist (at most ${BLOCKLIST_LIMITS.entries} entries of 1–${BLOCKLIST_LIMITS.entryChars} characters; the body may be up to 2 MiB); every node applies it at once`,
      tags,
      body: BlocklistBody,
      maxBodyBytes: BLOCKLIST_MAX_BODY_BYTES,
      auth,
      responses: { 200: { description: 'Set', schema: BlocklistView }, 400: { description: 'Invalid entries (each names its index)' }, ...keyErrors },
      handler: async ({ body, auth }) => {
        const set = await ctx.blocklists.set(auth.appId, body.entries, `apiKey:${auth.keyId}`);
        return set instanceof ApiError ? set : { status: 200, body: set };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/moderation/actions',
      operationId: 'listModerationActions',
      summary: 'Every moderation action (who, what, when, why), newest first, a page at a time; kept 90 days',
      tags,
      query: ListQuery,
      auth,
      responses: { 200: { description: 'A page of actions', schema: ActionList }, 400: { description: 'Invalid size or cursor' }, ...keyErrors },
      handler: async ({ query, auth }) => {
        const size = query.size ?? 50;
        const actions = await ctx.store.moderation.actions(auth.appId, query.cursor, size + 1);
        const page = actions.slice(0, size);
        return { status: 200, body: { actions: page.map(actionView), ...(actions.length > size ? { nextCursor: page.at(-1)!.id } : {}) } };
      },
    }),
  ];
}
