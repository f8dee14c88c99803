import { ApiError, defineRoute, isApiError, type AnyRoute } from '../../common/index.ts';
import type { NodeContext } from '../context.ts';
import { CHAT_LIST, customDataProblem, storedData } from '../chat/index.ts';
import { AddMembersBody, ChatList, ChatParams, ChatSummary, CreateChatBody, ListChatsQuery, MemberList, MemberParams, MemberSchema, ReadBody, RenameChatBody, SetRoleBody } from './schemas.ts';
import Type from 'typebox';

const reply = <T>(status: number, value: T | ApiError) => (isApiError(value) ? value : { status, body: value });

export function chatRoutes(ctx: NodeContext): AnyRoute[] {
  // authenticateUser also counts the user's requests (RATE_LIMITED).
  const auth = { verify: ctx.authenticateUser, security: 'userJwt', responses: { 403: { description: 'The user is banned (USER_BANNED)' }, 429: { description: "Too many requests (RATE_LIMITED, with Retry-After): over this user's request budget, or for a change its write budget or a busy chat" } } };
  const tags = ['chats'];
  const common = { 401: { description: 'JWT missing, invalid or expired' }, 404: { description: 'No such chat, or you are not a member (CHAT_NOT_FOUND)' } };
  return [
    defineRoute({
      method: 'POST',
      path: '/api/chats',
      operationId: 'createChat',
      summary: 'Create a direct chat (one per pair: again returns the same chat, 200) or a group (you are its owner)',
      tags,
      body: CreateChatBody,
      auth,
      responses: { 200: { description: 'The existing direct chat', schema: ChatSummary }, 201: { description: 'Created', schema: ChatSummary }, 400: { description: 'Invalid fields' }, 401: common[401], 403: { description: 'You or a named user are in the most chats a user may be in, USER_CHATS_MAX (CHAT_LIMIT_REACHED)' }, 404: { description: 'A named user does not exist (USER_NOT_FOUND)' } },
      handler: async ({ body, auth }) => {
        const problem = customDataProblem(body.data, '/body/data');
        if (problem) return problem;
        const data = storedData(body.data);
        if (body.type === 'direct') {
          const result = await ctx.chats.createDirect(auth, body.userId, data);
          if (isApiError(result)) return result;
          if (result.created) ctx.usage.chatCreated(auth.appId);
          return reply(result.created ? 201 : 200, await ctx.chats.get(auth, result.chat.id));
        }
        const chat = await ctx.chats.createGroup(auth, body.name, body.memberIds, data);
        if (isApiError(chat)) return chat;
        ctx.usage.chatCreated(auth.appId);
        return reply(201, await ctx.chats.get(auth, chat.id));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/chats',
      operationId: 'listChats',
      summary: `My chats, most recent activity first (a chat takes its place within about a second of its newest message; on Cassandra a busy chat within 10 s, a chat that was quiet within about a second), each with its last message and my unread count (default ${CHAT_LIST.defaultSize}, at most ${CHAT_LIST.maxSize} per page); a page costs the same whatever my chat count`,
      tags,
      query: ListChatsQuery,
      auth,
      responses: { 200: { description: 'A page; pass `nextCursor` as `cursor` for the next', schema: ChatList }, 400: { description: 'Invalid size or cursor' }, 401: common[401] },
      handler: async ({ query, auth }) => reply(200, await ctx.chats.list(auth, query.size ?? CHAT_LIST.defaultSize, query.cursor || undefined)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/chats/:chatId',
      operationId: 'getChat',
      summary: 'A chat of mine',
      tags,
      params: ChatParams,
      auth,
      responses: { 200: { description: 'The chat', schema: ChatSummary }, 400: { description: 'chatId is not a UUID' }, ...common },
      handler: async ({ params, auth }) => reply(200, await ctx.chats.get(auth, params.chatId)),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/chats/:chatId',
      operationId: 'renameChat',
      summary: "Change a chat: a group's name, a chat's data, or both (a group: owner or admin; a direct chat: either member, data only)",
      tags,
      params: ChatParams,
      body: RenameChatBody,
      auth,
      responses: { 200: { description: 'Renamed', schema: ChatSummary }, 400: { description: 'Invalid name' }, 403: { description: 'Not allowed (NOT_ALLOWED)' }, ...common },
      handler: async ({ params, body, auth }) => reply(200, customDataProblem(body.data, '/body/data') ?? (await ctx.chats.rename(auth, params.chatId, body))),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/chats/:chatId',
      operationId: 'deleteChat',
      summary: 'Delete a chat (a group: its owner; a direct chat: either member)',
      tags,
      params: ChatParams,
      auth,
      responses: { 204: { description: 'Deleted' }, 400: { description: 'chatId is not a UUID' }, 403: { description: 'Not allowed' }, ...common },
      handler: async ({ params, auth }) => {
        const r = await ctx.chats.remove(auth, params.chatId);
        if (isApiError(r)) return r;
        ctx.usage.chatDeleted(auth.appId);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/chats/:chatId/members',
      operationId: 'listMembers',
      summary: 'Members of a chat, in joining order',
      tags,
      params: ChatParams,
      auth,
      responses: { 200: { description: 'Members', schema: MemberList }, 400: { description: 'chatId is not a UUID' }, ...common },
      handler: async ({ params, auth }) => {
        const members = await ctx.chats.members(auth, params.chatId);
        return isApiError(members) ? members : { status: 200, body: { members } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/chats/:chatId/members',
      operationId: 'addMembers',
      summary: 'Add members to a group (owner or admin); existing members are left as they are',
      tags,
      params: ChatParams,
      body: AddMembersBody,
      auth,
      responses: { 200: { description: 'The members added', schema: MemberList }, 400: { description: 'Invalid fields' }, 403: { description: 'Not allowed (NOT_ALLOWED), the group is full (MEMBER_LIMIT_REACHED), or a named user is in USER_CHATS_MAX chats (CHAT_LIMIT_REACHED)' }, ...common },
      handler: async ({ params, body, auth }) => {
        const added = await ctx.chats.addMembers(auth, params.chatId, body.userIds, body.role ?? 'member');
        return isApiError(added) ? added : { status: 200, body: { members: added } };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/chats/:chatId/members/:userId',
      operationId: 'setMemberRole',
      summary: 'Make a member admin or member (owner only)',
      tags,
      params: MemberParams,
      body: SetRoleBody,
      auth,
      responses: { 200: { description: 'The member', schema: MemberSchema }, 400: { description: 'Invalid fields' }, 403: { description: 'Not allowed' }, ...common },
      handler: async ({ params, body, auth }) => reply(200, await ctx.chats.setRole(auth, params.chatId, params.userId, body.role)),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/chats/:chatId/members/:userId',
      operationId: 'removeMember',
      summary: 'Remove a member from a group (owner or admin; anyone may remove themselves)',
      description: 'The removed member stops receiving the chat’s events at once and gets 400 from its history.',
      tags,
      params: MemberParams,
      auth,
      responses: { 204: { description: 'Removed' }, 400: { description: 'Invalid ids' }, 403: { description: 'Not allowed' }, ...common },
      handler: async ({ params, auth }) => {
        const r = await ctx.chats.removeMember(auth, params.chatId, params.userId);
        return isApiError(r) ? r : { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/chats/:chatId/leave',
      operationId: 'leaveChat',
      summary: 'Leave a group (an owner leaving hands ownership to the longest-standing admin, else member)',
      tags,
      params: ChatParams,
      auth,
      responses: { 204: { description: 'Left' }, 400: { description: 'chatId is not a UUID' }, 403: { description: 'Direct chats cannot be left' }, ...common },
      handler: async ({ params, auth }) => {
        const r = await ctx.chats.removeMember(auth, params.chatId, auth.userId);
        return isApiError(r) ? r : { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/chats/:chatId/read',
      operationId: 'markRead',
      summary: 'Mark messages read up to `seq` (never moves back; capped at the newest message)',
      tags,
      params: ChatParams,
      body: ReadBody,
      auth,
      responses: { 200: { description: 'The read mark now stored', schema: Type.Object({ readSeq: Type.Integer() }) }, 400: { description: 'Invalid fields' }, ...common },
      handler: async ({ params, body, auth }) => {
        const r = await ctx.chats.markRead(auth, params.chatId, body.seq);
        return isApiError(r) ? r : { status: 200, body: { readSeq: r } };
      },
    }),
  ];
}
