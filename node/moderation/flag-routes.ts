import Type from 'typebox';
import { v7 as uuidv7 } from 'uuid';
import { ApiError, DisplayText, defineRoute, type AnyRoute } from '../../common/index.ts';
import { FlagSchema, flagView } from '../chat/index.ts';
import type { NodeContext } from '../context.ts';
import { storedReply } from '../store/index.ts';
import { futureTime } from './chat-routes.ts';
import { banUser } from './routes.ts';
import { ListQuery } from './schemas.ts';

/** Highest hide threshold (distinct open flags); the bound of a group's members would do, this is ample. */
export const MAX_HIDE_THRESHOLD = 100;

const Uuid = Type.String({ format: 'uuid' });
const FlaggedMessage = Type.Object(
  { content: Type.String({ description: 'As stored: shown here even while hidden' }), hidden: Type.Boolean(), deleted: Type.Boolean() },
  { description: 'The flagged message now (absent when its chat is gone)' },
);
const QueuedFlag = Type.Object({ ...FlagSchema.properties, message: Type.Optional(FlaggedMessage) });
const ResolveBody = Type.Object(
  {
    action: Type.Union([Type.Literal('dismiss'), Type.Literal('delete'), Type.Literal('ban')], {
      description: '`dismiss`: the flags were wrong (a hidden message is shown again); `delete`: the message is deleted; `ban`: its sender is banned from the application',
    }),
    reason: Type.Optional(DisplayText(1, 500, { description: 'Recorded in the moderation log (and the ban, for `ban`)' })),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'For `ban`: when the ban lifts (absent: until lifted)' })),
  },
  { additionalProperties: false },
);
const Settings = Type.Object(
  { flagHideThreshold: Type.Integer({ minimum: 0, maximum: MAX_HIDE_THRESHOLD, description: `Open flags by distinct members that hide a message pending review; 0 (the default): never hidden (0–${MAX_HIDE_THRESHOLD})` }) },
  { additionalProperties: false },
);

/** The backend's review queue of flagged messages and the moderation settings (API key; README, "Moderation"). */
export function flagRoutes(ctx: NodeContext): AnyRoute[] {
  const auth = { verify: ctx.authenticateApiKey, security: 'apiKey' };
  const tags = ['moderation (server, API key)'];
  const keyErrors = { 401: { description: 'API key missing, invalid, revoked or for another cluster' } };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/moderation/flags',
      operationId: 'listFlags',
      summary: 'Open flags, newest first, a page at a time, each with its message as stored; unreviewed flags expire after 90 days',
      tags,
      query: ListQuery,
      auth,
      responses: { 200: { description: 'A page of open flags', schema: Type.Object({ flags: Type.Array(QueuedFlag), nextCursor: Type.Optional(Type.String()) }) }, 400: { description: 'Invalid size or cursor' }, ...keyErrors },
      handler: async ({ query, auth }) => {
        const size = query.size ?? 50;
        const flags = await ctx.store.flags.open(auth.appId, query.cursor, size + 1);
        const page = flags.slice(0, size);
        const keys = [...new Set(page.map((f) => `${f.chatId}/${f.messageId}`))];
        const messages = new Map(await Promise.all(keys.map(async (k) => {
          const [chatId, messageId] = k.split('/') as [string, string];
          // A flagged reply is kept in its thread: found through its parent.
          return [k, (await ctx.store.messages.get(auth.appId, chatId, messageId)) ?? (await storedReply(ctx.store.messages, auth.appId, chatId, messageId))] as const;
        })));
        const views = page.map((f) => {
          const m = messages.get(`${f.chatId}/${f.messageId}`);
          return { ...flagView(f), ...(m ? { message: { content: m.content, hidden: m.hiddenAt !== undefined && m.deletedAt === undefined, deleted: m.deletedAt !== undefined } } : {}) };
        });
        return { status: 200, body: { flags: views, ...(flags.length > size ? { nextCursor: page.at(-1)!.id } : {}) } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/moderation/flags/:flagId/resolve',
      operationId: 'resolveFlag',
      summary: 'Resolve a flag, and with it every open flag of the same message: dismiss (a hidden message is shown again), delete the message, or ban its sender',
      tags,
      params: Type.Object({ flagId: Uuid }),
      body: ResolveBody,
      auth,
      responses: {
        200: { description: 'Resolved: the flags it closed', schema: Type.Object({ action: ResolveBody.properties.action, flags: Type.Array(FlagSchema) }) },
        400: { description: 'Invalid fields (expiresAt must be in the future, and only with `ban`)' },
        ...keyErrors,
        404: { description: 'No open flag with this id (FLAG_NOT_FOUND)' },
      },
      handler: async ({ params, body, auth }) => {
        if (body.expiresAt !== undefined && body.action !== 'ban') return new ApiError('VALIDATION_FAILED', 'expiresAt goes only with action ban', { errors: [{ path: '/body/expiresAt', message: 'only with action ban' }] });
        const expiresAt = futureTime(body.expiresAt, ctx.now());
        if (expiresAt instanceof ApiError) return expiresAt;
        const flag = await ctx.store.flags.get(auth.appId, params.flagId);
        if (!flag) return new ApiError('FLAG_NOT_FOUND', 'no open flag with this id (resolved, expired, or never made)');
        const by = `apiKey:${auth.keyId}`;
        const now = ctx.now().toISOString();
        if (body.action === 'ban') {
          await banUser(ctx, auth.appId, flag.senderId, by, body.reason, expiresAt, { chatId: flag.chatId, messageId: flag.messageId });
        } else {
          // Recorded first, as every action: no change exists unrecorded.
          await ctx.store.moderation.log({ appId: auth.appId, id: uuidv7(), at: now, action: body.action === 'dismiss' ? 'flag.dismissed' : 'flag.deleted', userId: flag.senderId, chatId: flag.chatId, messageId: flag.messageId, by, ...(body.reason !== undefined ? { reason: body.reason } : {}) });
          // A chat deleted since has nothing left to restore or delete: the flags are resolved all the same.
          const done = await ctx.chats.review(auth.appId, flag.chatId, flag.messageId, body.action === 'dismiss' ? 'restore' : 'delete');
          if (done instanceof ApiError && done.code !== 'CHAT_NOT_FOUND' && done.code !== 'MESSAGE_NOT_FOUND') return done;
        }
        const closed = (await ctx.store.flags.resolve(auth.appId, flag.chatId, flag.messageId, flag.id)).map(flagView);
        await ctx.webhooks?.emit(auth.appId, [{ type: 'flag.resolved', data: { action: body.action, chatId: flag.chatId, messageId: flag.messageId, senderId: flag.senderId, flagIds: closed.map((f) => f.flagId), by } }]);
        return { status: 200, body: { action: body.action, flags: closed } };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/moderation/settings',
      operationId: 'getModerationSettings',
      summary: 'The application’s moderation settings',
      tags,
      auth,
      responses: { 200: { description: 'The settings', schema: Settings }, ...keyErrors },
      handler: async ({ auth }) => ({ status: 200, body: { flagHideThreshold: await ctx.store.flags.hideThreshold(auth.appId) } }),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/moderation/settings',
      operationId: 'setModerationSettings',
      summary: 'Set the application’s moderation settings (applied to the next flag on every node)',
      tags,
      body: Settings,
      auth,
      responses: { 200: { description: 'Set', schema: Settings }, 400: { description: 'Invalid fields' }, ...keyErrors },
      handler: async ({ body, auth }) => {
        await ctx.store.flags.setHideThreshold(auth.appId, body.flagHideThreshold);
        return { status: 200, body };
      },
    }),
  ];
}
