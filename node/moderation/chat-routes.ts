import Type from 'typebox';
import { ApiError, DisplayText, defineRoute, type AnyRoute, type RequestInfo } from '../../common/index.ts';
import { bearerTokenKind } from '../../common/jwt/index.ts';
import { ChatBanSchema, FlagSchema, MuteSchema, type Moderator } from '../chat/index.ts';
import type { NodeContext } from '../context.ts';
import { ListQuery } from './schemas.ts';

const Uuid = Type.String({ format: 'uuid' });
const ExpiresAt = Type.String({ format: 'date-time', description: 'When it lifts by itself (in the future); absent: until it is lifted' });
const MuteBody = Type.Object({ userId: Uuid, expiresAt: Type.Optional(ExpiresAt) }, { additionalProperties: false });
const ChatBanBody = Type.Object({ userId: Uuid, reason: Type.Optional(DisplayText(1, 500, { description: 'Why (1–500 characters)' })), expiresAt: Type.Optional(ExpiresAt) }, { additionalProperties: false });
const ChatParams = Type.Object({ chatId: Uuid });
const MemberParams = Type.Object({ chatId: Uuid, userId: Uuid });
const FlagParams = Type.Object({ chatId: Uuid, messageId: Uuid });
const FlagBody = Type.Object({ reason: DisplayText(1, 500, { description: 'Why the message should be reviewed (1–500 characters)' }) }, { additionalProperties: false });
const Flagged = Type.Object({ ...FlagSchema.properties, messageHidden: Type.Boolean({ description: 'Whether the message is now hidden pending review' }) });

/** A future `expiresAt`, normalized, or the refusal naming the field. */
export function futureTime(value: string | undefined, now: Date): string | undefined | ApiError {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!(ms > now.getTime())) return new ApiError('VALIDATION_FAILED', 'expiresAt must be in the future', { errors: [{ path: '/body/expiresAt', message: 'must be a time in the future' }] });
  return new Date(ms).toISOString();
}

/**
 * Per-chat mutes and bans (by the backend's API key or a group owner's or admin's JWT: either
 * authenticates), and members' flags (README, "Moderation").
 */
export function chatModerationRoutes(ctx: NodeContext): AnyRoute[] {
  const moderator = {
    security: ['apiKey', 'userJwt'],
    responses: { 403: { description: 'The user is banned (USER_BANNED), or not a group owner or admin (NOT_ALLOWED)' }, 429: { description: 'Over the key’s or user’s request or write budget (RATE_LIMITED)' } },
    verify: async (request: RequestInfo): Promise<{ appId: string; by: Moderator } | ApiError> => {
      if (bearerTokenKind(request.headers['authorization']) === 'api_key') {
        const p = await ctx.authenticateApiKey(request);
        return p instanceof ApiError ? p : { appId: p.appId, by: { kind: 'backend', keyId: p.keyId } };
      }
      const p = await ctx.authenticateUser(request);
      return p instanceof ApiError ? p : { appId: p.appId, by: { kind: 'user', userId: p.userId } };
    },
  };
  const tags = ['moderation (server API key, or group owner/admin JWT)'];
  const errors = { 401: { description: 'Credentials missing or invalid' }, 404: { description: 'No such chat, or you are not a member (CHAT_NOT_FOUND)' } };
  return [
    defineRoute({
      method: 'POST',
      path: '/api/chats/:chatId/mutes',
      operationId: 'muteMember',
      summary: 'Mute a member: it still reads and receives, but its sends, edits, reactions and typing are refused (USER_MUTED) until it lifts; announced to the chat (`member.muted`)',
      tags,
      params: ChatParams,
      body: MuteBody,
      auth: moderator,
      responses: { 201: { description: 'Muted (a mute in force is replaced)', schema: MuteSchema }, 400: { description: 'Invalid fields (expiresAt must be in the future)' }, ...errors },
      handler: async ({ params, body, auth }) => {
        const expiresAt = futureTime(body.expiresAt, ctx.now());
        if (expiresAt instanceof ApiError) return expiresAt;
        const result = await ctx.chats.moderate(auth.appId, params.chatId, auth.by, { kind: 'mute', userId: body.userId, ...(expiresAt ? { expiresAt } : {}) });
        return result instanceof ApiError ? result : { status: 201, body: result };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/chats/:chatId/mutes/:userId',
      operationId: 'unmuteMember',
      summary: 'Lift a member’s mute; announced to the chat (`member.unmuted`)',
      tags,
      params: MemberParams,
      auth: moderator,
      responses: { 204: { description: 'Lifted' }, 400: { description: 'chatId or userId is not a UUID' }, ...errors, 404: { description: 'No such chat (CHAT_NOT_FOUND), or the member has no mute in force (MUTE_NOT_FOUND)' } },
      handler: async ({ params, auth }) => {
        const result = await ctx.chats.moderate(auth.appId, params.chatId, auth.by, { kind: 'unmute', userId: params.userId });
        return result instanceof ApiError ? result : { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/chats/:chatId/mutes',
      operationId: 'listMutes',
      summary: 'The chat’s members muted now (for the backend and the chat’s owner and admins)',
      tags,
      params: ChatParams,
      auth: moderator,
      responses: { 200: { description: 'Mutes in force', schema: Type.Object({ mutes: Type.Array(MuteSchema) }) }, 400: { description: 'chatId is not a UUID' }, ...errors },
      handler: async ({ params, auth }) => {
        const mutes = await ctx.chats.chatMutes(auth.appId, params.chatId, auth.by);
        return mutes instanceof ApiError ? mutes : { status: 200, body: { mutes } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/chats/:chatId/bans',
      operationId: 'banMember',
      summary: 'Ban a user from a group: a member is removed, and nobody adds it back (MEMBER_BANNED) until the ban lifts; announced to the chat (`member.banned`)',
      tags,
      params: ChatParams,
      body: ChatBanBody,
      auth: moderator,
      responses: { 201: { description: 'Banned (a ban in force is replaced)', schema: ChatBanSchema }, 400: { description: 'Invalid fields (expiresAt must be in the future)' }, ...errors },
      handler: async ({ params, body, auth }) => {
        const expiresAt = futureTime(body.expiresAt, ctx.now());
        if (expiresAt instanceof ApiError) return expiresAt;
        const change = { kind: 'ban' as const, userId: body.userId, ...(body.reason !== undefined ? { reason: body.reason } : {}), ...(expiresAt ? { expiresAt } : {}) };
        const result = await ctx.chats.moderate(auth.appId, params.chatId, auth.by, change);
        return result instanceof ApiError ? result : { status: 201, body: result };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/chats/:chatId/bans/:userId',
      operationId: 'unbanMember',
      summary: 'Lift a user’s ban from a group (it can be added again); announced to the chat (`member.unbanned`)',
      tags,
      params: MemberParams,
      auth: moderator,
      responses: { 204: { description: 'Lifted' }, 400: { description: 'chatId or userId is not a UUID' }, ...errors, 404: { description: 'No such chat (CHAT_NOT_FOUND), or no ban in force (BAN_NOT_FOUND)' } },
      handler: async ({ params, auth }) => {
        const result = await ctx.chats.moderate(auth.appId, params.chatId, auth.by, { kind: 'unban', userId: params.userId });
        return result instanceof ApiError ? result : { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/chats/:chatId/bans',
      operationId: 'listChatBans',
      summary: 'The group’s bans in force, by user id, a page at a time (for the backend and the chat’s owner and admins)',
      tags,
      params: ChatParams,
      query: ListQuery,
      auth: moderator,
      responses: { 200: { description: 'A page of bans', schema: Type.Object({ bans: Type.Array(ChatBanSchema), nextCursor: Type.Optional(Type.String()) }) }, 400: { description: 'Invalid size or cursor' }, ...errors },
      handler: async ({ params, query, auth }) => {
        const page = await ctx.chats.chatBans(auth.appId, params.chatId, auth.by, query.cursor, query.size ?? 50);
        return page instanceof ApiError ? page : { status: 200, body: page };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/messages/:chatId/:messageId/flags',
      operationId: 'flagMessage',
      summary: 'Flag a message of a chat you are in for review, once; enough flags (the application’s threshold) hide it pending review',
      tags: ['messages (browser, user JWT)'],
      params: FlagParams,
      body: FlagBody,
      auth: { verify: ctx.authenticateUser, security: 'userJwt', responses: { 403: { description: 'The user is banned (USER_BANNED)' }, 429: { description: "Over this user's request or write budget (RATE_LIMITED)" } } },
      responses: {
        201: { description: 'Flagged', schema: Flagged },
        400: { description: 'Invalid fields' },
        401: { description: 'JWT missing, invalid or expired' },
        403: { description: 'Your own message (NOT_ALLOWED)' },
        404: { description: 'No such chat or message (CHAT_NOT_FOUND, MESSAGE_NOT_FOUND)' },
        409: { description: 'You flagged it already (ALREADY_FLAGGED), or it is deleted (MESSAGE_DELETED)' },
      },
      handler: async ({ params, body, auth }) => {
        const result = await ctx.chats.flag(auth, params.chatId, params.messageId, body.reason);
        if (result instanceof ApiError) return result;
        await ctx.webhooks?.emit(auth.appId, [{ type: 'message.flagged', data: { ...result.flag, messageHidden: result.hidden } }]);
        return { status: 201, body: { ...result.flag, messageHidden: result.hidden } };
      },
    }),
  ];
}
