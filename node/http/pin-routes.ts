import Type from 'typebox';
import { defineRoute, isApiError, type AnyRoute } from '../../common/index.ts';
import { CHAT_LIMITS, PinnedSchema, PinSchema } from '../chat/index.ts';
import type { NodeContext } from '../context.ts';

const Uuid = Type.String({ format: 'uuid' });
const ChatParams = Type.Object({ chatId: Uuid });
const PinParams = Type.Object({ chatId: Uuid, messageId: Uuid });
const PinBody = Type.Object({ messageId: Uuid }, { additionalProperties: false });

/** A chat's pinned messages (README, "Pins"): listed by members, changed by a group's owners and admins. */
export function pinRoutes(ctx: NodeContext): AnyRoute[] {
  const auth = { verify: ctx.authenticateUser, security: 'userJwt', responses: { 403: { description: 'The user is banned (USER_BANNED)' }, 429: { description: "Over this user's request or write budget (RATE_LIMITED, with Retry-After)" } } };
  const tags = ['chats'];
  const errors = { 401: { description: 'JWT missing, invalid or expired' }, 404: { description: 'No such chat or message, or you are not a member' } };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/chats/:chatId/pins',
      operationId: 'listPins',
      summary: `The chat's pinned messages (at most ${CHAT_LIMITS.pins}), the newest pin first, each with its message as it is now`,
      tags,
      params: ChatParams,
      auth,
      responses: { 200: { description: 'The pins', schema: Type.Object({ pins: Type.Array(PinnedSchema) }) }, 400: { description: 'chatId is not a UUID' }, ...errors },
      handler: async ({ params, auth }) => {
        const pins = await ctx.chats.pins(auth, params.chatId);
        return isApiError(pins) ? pins : { status: 200, body: { pins } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/chats/:chatId/pins',
      operationId: 'pinMessage',
      summary: `Pin a message (a group's owners and admins; either member of a direct chat); pinning it again changes nothing; announced as message.pinned`,
      tags,
      params: ChatParams,
      body: PinBody,
      auth,
      responses: {
        200: { description: 'The pin (the one already there when it was pinned before)', schema: Type.Object({ pin: PinSchema }) },
        400: { description: 'Invalid fields' },
        403: { description: 'Not an owner or admin of the group (NOT_ALLOWED), or banned' },
        ...errors,
        409: { description: `The message is deleted (MESSAGE_DELETED), or the chat has ${CHAT_LIMITS.pins} pins (PIN_LIMIT_REACHED)` },
      },
      handler: async ({ params, body, auth }) => {
        const pin = await ctx.chats.pin(auth, params.chatId, body.messageId, true);
        return isApiError(pin) ? pin : { status: 200, body: { pin } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/chats/:chatId/pins/:messageId',
      operationId: 'unpinMessage',
      summary: 'Unpin a message (idempotent); announced as message.unpinned',
      tags,
      params: PinParams,
      auth,
      responses: { 204: { description: 'Not pinned (any more)' }, 400: { description: 'Invalid ids' }, 403: { description: 'Not an owner or admin of the group (NOT_ALLOWED), or banned' }, ...errors },
      handler: async ({ params, auth }) => {
        const r = await ctx.chats.pin(auth, params.chatId, params.messageId, false);
        return isApiError(r) ? r : { status: 204 };
      },
    }),
  ];
}
