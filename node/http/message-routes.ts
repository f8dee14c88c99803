import Type from 'typebox';
import { ApiError, defineRoute, isApiError, type AnyRoute, type RequestInfo } from '../../common/index.ts';
import { bearerTokenKind } from '../../common/jwt/index.ts';
import type { NodeContext } from '../context.ts';
import { PAGE, REACTION_SUMMARY } from '../chat/index.ts';
import { customDataProblem, IdempotencyKey, sendInputOf, type Principal } from '../chat/index.ts';
import { EditBody, GetMessagesQuery, MessageList, MessageParams, MessageResult, ReactBody, ReactionPage, ReactionParams, ReactionsQuery, SendBody, ChatParams } from './schemas.ts';

/** A send's problems name the frame's fields (`/attachments/0`, `/mentions/1`, as a WebSocket error does); here they are the body's. */
const frameField = (path: string) => path.startsWith('/attachments') || path.startsWith('/mentions') || path.startsWith('/parentId');
const inBody = (e: ApiError) =>
  e.extra.errors?.some((p) => frameField(p.path)) ? new ApiError(e.code, e.detail.replace(/^\/(attachments|mentions|parentId)/, '/body/$1'), { ...e.extra, errors: e.extra.errors.map((p) => (frameField(p.path) ? { ...p, path: `/body${p.path}` } : p)) }) : e;

const asMessage = (r: unknown) => (isApiError(r) ? r : { status: 200, body: { message: r } });

/** Who sends: a user with its JWT, or the application's backend with its API key (on behalf of a member). */
type Sender = { appId: string; userId: string; backend: false } | { appId: string; backend: true };

/**
 * The principal a send runs as. A user sends as itself, and never a system message; the backend
 * names the member it sends for (`senderId`), and may send a system message.
 */
function senderOf(auth: Sender, body: { senderId?: string | undefined; type?: string | undefined }): Principal | ApiError {
  if (auth.backend) return body.senderId === undefined ? ApiError.field('VALIDATION_FAILED', '/body/senderId', 'required with the API key: the member the message is from') : { appId: auth.appId, userId: body.senderId };
  if (body.type === 'system') return ApiError.field('NOT_ALLOWED', '/body/type', 'system messages are sent only with the API key');
  if (body.senderId !== undefined && body.senderId !== auth.userId) return ApiError.field('NOT_ALLOWED', '/body/senderId', 'only the API key sends for another user');
  return { appId: auth.appId, userId: auth.userId };
}

export function messageRoutes(ctx: NodeContext): AnyRoute[] {
  // authenticateUser also counts the user's requests (RATE_LIMITED).
  const auth = { verify: ctx.authenticateUser, security: 'userJwt', responses: { 403: { description: 'The user is banned (USER_BANNED)' }, 429: { description: "Too many requests (RATE_LIMITED, with Retry-After): over this user's request budget, or for a change its write budget or a busy chat" } } };
  const tags = ['messages'];
  // The send route takes either credential (README, "Custom data": system messages come from the backend).
  const userOrBackend = {
    security: ['userJwt', 'apiKey'],
    responses: auth.responses,
    verify: async (request: RequestInfo): Promise<Sender | ApiError> => {
      if (bearerTokenKind(request.headers['authorization']) === 'api_key') {
        const p = await ctx.authenticateApiKey(request);
        return p instanceof ApiError ? p : { appId: p.appId, backend: true };
      }
      const p = await ctx.authenticateUser(request);
      return p instanceof ApiError ? p : { appId: p.appId, userId: p.userId, backend: false };
    },
  };
  const common = { 401: { description: 'JWT missing, invalid or expired' }, 404: { description: 'No such chat or message, or you are not a member' } };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/messages/getMessages/:chatId',
      operationId: 'getMessages',
      summary: `History, newest first: size default ${PAGE.defaultSize}, minimum 1, maximum ${PAGE.maxSize}`,
      description:
        'Returns the `size` newest messages older than `lastMessage` (the id of the oldest message of the previous page). ' +
        'Absent or empty `lastMessage` starts from the newest. Pages are stable while new messages arrive: new ones are never ' +
        'inserted into older pages. Side effect: marks the newest returned message read.',
      tags,
      params: ChatParams,
      query: GetMessagesQuery,
      auth,
      responses: {
        200: { description: 'A page of messages', schema: MessageList },
        400: { description: 'The chat does not exist or you are not a member (CHAT_NOT_ACCESSIBLE), or invalid size/lastMessage' },
        401: common[401],
      },
      handler: async ({ params, query, auth }) => {
        const messages = await ctx.chats.history(auth, params.chatId, query.size ?? PAGE.defaultSize, query.lastMessage || undefined);
        return isApiError(messages) ? messages : { status: 200, body: { messages } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/messages/:chatId',
      operationId: 'sendMessage',
      summary: 'Send a message; answered once it is durable',
      description:
        'With an idempotency key (body `idempotencyKey` or header `Idempotency-Key`) a retry returns the first message (200) instead of sending again. ' +
        "When the application has a before-send hook, it is asked first and may reject the message (422) or replace its content: the answer carries the message as stored. " +
        'With the API key instead of a JWT, your backend sends for the member named by `senderId`, and may send a `system` message (a notice; members cannot send one).',
      tags,
      params: ChatParams,
      body: SendBody,
      headers: Type.Object({ 'Idempotency-Key': Type.Optional(IdempotencyKey) }),
      auth: userOrBackend,
      responses: {
        201: { description: 'Sent', schema: MessageResult },
        200: { description: 'A retry of an earlier send with the same idempotency key', schema: MessageResult },
        400: { description: 'Invalid fields (VALIDATION_FAILED; empty content without attachments too; data too large or deep; no senderId with the API key)' },
        ...common,
        403: { description: 'The user is banned (USER_BANNED), or sent a system message or for another user (NOT_ALLOWED)' },
        409: { description: 'An attachment is already sent in another message (ATTACHMENT_IN_USE)' },
        422: { description: "The application's before-send hook rejected the message (MESSAGE_REJECTED; `detail` is its reason); nothing was stored" },
        429: { description: 'Sending too fast, or the chat or node is overloaded (RATE_LIMITED, with Retry-After)' },
        503: { description: "A backend is unavailable or overloaded (UNAVAILABLE), the write may or may not have been stored (OUTCOME_UNKNOWN: retry with the same idempotencyKey), or the application's before-send hook failed and its policy is closed (BEFORE_SEND_FAILED); nothing was stored" },
      },
      handler: async ({ params, body, auth, request }) => {
        const headerKey = request.headers['idempotency-key'];
        if (headerKey !== undefined && (headerKey.length === 0 || headerKey.length > 64)) return new ApiError('VALIDATION_FAILED', 'Idempotency-Key must be 1–64 characters');
        if (headerKey !== undefined && body.idempotencyKey !== undefined && headerKey !== body.idempotencyKey) {
          return new ApiError('VALIDATION_FAILED', 'Idempotency-Key header and idempotencyKey differ');
        }
        const from = senderOf(auth, body);
        if (from instanceof ApiError) return from;
        const input = sendInputOf({ ...body, idempotencyKey: body.idempotencyKey ?? headerKey }, '/body');
        if (isApiError(input)) return input;
        if (body.type === 'system') input.system = true;
        // Admitted by the chat service, as a WebSocket send is (chat/send-admission.ts).
        const r = await ctx.chats.send(from, params.chatId, input);
        return isApiError(r) ? inBody(r) : { status: r.created ? 201 : 200, body: { message: r.message } };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/messages/:chatId/:messageId',
      operationId: 'editMessage',
      summary: 'Edit your message: its content, its data or both (sets edited and editedAt); a system message is not edited',
      tags,
      params: MessageParams,
      body: EditBody,
      auth,
      responses: { 200: { description: 'Edited', schema: MessageResult }, 400: { description: 'Invalid fields' }, 403: { description: 'Not the author' }, ...common, 409: { description: 'The message is deleted' } },
      handler: async ({ params, body, auth }) => {
        const problem = customDataProblem(body.data, '/body/data');
        return problem ?? asMessage(await ctx.chats.edit(auth, params.chatId, params.messageId, body));
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/messages/:chatId/:messageId',
      operationId: 'deleteMessage',
      summary: 'Delete a message (author, owner or admin); it stays as a tombstone: content "", deleted true, no reactions',
      tags,
      params: MessageParams,
      auth,
      responses: { 200: { description: 'The tombstone', schema: MessageResult }, 400: { description: 'Invalid ids' }, 403: { description: 'Not allowed' }, ...common },
      handler: async ({ params, auth }) => asMessage(await ctx.chats.deleteMessage(auth, params.chatId, params.messageId)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/messages/:chatId/:messageId/reactions',
      operationId: 'addReaction',
      summary: 'Add your reaction (one per user per reaction value; adding it again changes nothing)',
      tags,
      params: MessageParams,
      body: ReactBody,
      auth,
      responses: { 200: { description: 'The message with its reactions', schema: MessageResult }, 400: { description: 'Invalid fields' }, ...common, 409: { description: 'The message is deleted' } },
      handler: async ({ params, body, auth }) => asMessage(await ctx.chats.react(auth, params.chatId, params.messageId, body.reaction, true)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/messages/:chatId/:messageId/reactions',
      operationId: 'listReactions',
      summary: `A message's reactions in full, oldest first, optionally of one value: limit default ${REACTION_SUMMARY.defaultPage}, maximum ${REACTION_SUMMARY.maxPage}`,
      description:
        'A message itself carries only `reactionCounts`, its latest 10 `reactions` and your `ownReactions`; this pages through all of them. ' +
        'The cursor names a reaction by its time and id, so one removed between two pages moves nothing: every reaction present throughout is listed once.',
      tags,
      params: MessageParams,
      query: ReactionsQuery,
      auth,
      responses: { 200: { description: 'A page of reactions', schema: ReactionPage }, 400: { description: 'Invalid fields' }, ...common },
      handler: async ({ params, query, auth }) => {
        const page = await ctx.chats.reactions(auth, params.chatId, params.messageId, { limit: query.limit ?? REACTION_SUMMARY.defaultPage, ...(query.after === undefined ? {} : { after: query.after }), ...(query.reaction === undefined ? {} : { reaction: query.reaction }) });
        return isApiError(page) ? page : { status: 200, body: page };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/messages/:chatId/:messageId/reactions/:reaction',
      operationId: 'removeReaction',
      summary: 'Remove your reaction (idempotent)',
      tags,
      params: ReactionParams,
      auth,
      responses: { 200: { description: 'The message with its reactions', schema: MessageResult }, 400: { description: 'Invalid fields' }, ...common, 409: { description: 'The message is deleted' } },
      handler: async ({ params, auth }) => asMessage(await ctx.chats.react(auth, params.chatId, params.messageId, params.reaction, false)),
    }),
  ];
}
