import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import { ApiError, defineRoute, type AnyRoute } from '../../common/index.ts';
import type { NodeContext } from '../context.ts';
import type { ChatUser } from '../store/index.ts';
import { changeWithEvents, customDataProblem, storedData } from '../chat/index.ts';
import { RefreshBody, RegisterUserBody, SignInBody, UpdateUserBody, User, UserParams, UserSession } from './schemas.ts';

/** A user's sign-in lasts at most this long, however often it refreshes. */
const USER_SESSION_SECONDS = 30 * 24 * 3600;
const hash = (s: string) => createHash('sha256').update(s).digest('hex');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** User refresh tokens name their application (`urt_<appId>.<secret>`) so refresh needs no API key. */
const newRefreshToken = (appId: string) => `urt_${appId}.${randomBytes(32).toString('base64url')}`;
function appOf(token: string): string | undefined {
  const match = /^urt_([0-9a-f-]{36})\.[A-Za-z0-9_-]{43}$/.exec(token);
  return match && UUID.test(match[1]!) ? match[1] : undefined;
}

export const userView = (u: ChatUser): Static<typeof User> =>
  u.data === undefined
    ? { userId: u.id, username: u.username, displayName: u.displayName, createdAt: u.createdAt, updatedAt: u.updatedAt }
    : { userId: u.id, username: u.username, displayName: u.displayName, createdAt: u.createdAt, updatedAt: u.updatedAt, data: u.data };
const noUser = () => new ApiError('USER_NOT_FOUND', 'no such user in this application');

export function userRoutes(ctx: NodeContext): AnyRoute[] {
  const apiKey = { verify: ctx.authenticateApiKey, security: 'apiKey' };
  const server = 'users (server, API key)';
  const apiKeyErrors = { 401: { description: 'API key missing, invalid, revoked or for another cluster' } };

  const session = async (appId: string, userId: string) => {
    const refreshToken = newRefreshToken(appId);
    const familyId = randomUUID();
    const expiresAt = new Date(ctx.now().getTime() + USER_SESSION_SECONDS * 1000).toISOString();
    await ctx.store.userSessions.createFamily({ appId, id: familyId, userId, expiresAt }, { appId, hash: hash(refreshToken), familyId, userId, expiresAt });
    return { jwt: ctx.tokens.issue(appId, userId), refreshToken, userId, expiresIn: ctx.tokens.ttlSeconds };
  };

  return [
    defineRoute({
      method: 'POST',
      path: '/api/users',
      operationId: 'registerUser',
      summary: 'Register a chat user',
      tags: [server],
      body: RegisterUserBody,
      auth: apiKey,
      responses: { 201: { description: 'Registered', schema: User }, 400: { description: 'Invalid fields' }, ...apiKeyErrors, 409: { description: 'Username taken (USERNAME_TAKEN)' } },
      handler: async ({ body, auth }) => {
        const problem = customDataProblem(body.data, '/body/data');
        if (problem) return problem;
        const now = ctx.now().toISOString();
        const u: ChatUser = { appId: auth.appId, id: randomUUID(), username: body.username, displayName: body.displayName ?? body.username, createdAt: now, updatedAt: now };
        const data = storedData(body.data);
        if (data !== undefined) u.data = data;
        const event = { type: 'user.created', data: userView(u), check: { kind: 'user' as const, userId: u.id, present: true, username: u.username } };
        const created = await changeWithEvents(ctx.webhooks, auth.appId, [event], (events) => ctx.store.users.create(u, { events }), (r) => r === 'created');
        if (created === 'exists') return new ApiError('USERNAME_TAKEN', 'a user with this username exists in this application');
        ctx.usage.userRegistered(auth.appId);
        return { status: 201, body: userView(u) };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/users/signin',
      operationId: 'signIn',
      summary: 'Sign a user in: returns the JWT, refresh token and user id to hand to the browser',
      tags: [server],
      body: SignInBody,
      auth: apiKey,
      responses: { 200: { description: 'Signed in', schema: UserSession }, 400: { description: 'Invalid fields' }, ...apiKeyErrors, 403: { description: 'The user is banned (USER_BANNED)' }, 404: { description: 'No such user (USER_NOT_FOUND)' } },
      handler: async ({ body, auth }) => {
        const u = 'userId' in body ? await ctx.store.users.get(auth.appId, body.userId) : await ctx.store.users.getByUsername(auth.appId, body.username);
        if (!u) return noUser();
        const banned = await ctx.bans.refusal(auth.appId, u.id);
        if (banned) return banned;
        return { status: 200, body: await session(auth.appId, u.id) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/users/:userId',
      operationId: 'getUser',
      summary: 'Get a user',
      tags: [server],
      params: UserParams,
      auth: apiKey,
      responses: { 200: { description: 'The user', schema: User }, 400: { description: 'userId is not a UUID' }, ...apiKeyErrors, 404: { description: 'No such user' } },
      handler: async ({ params, auth }) => {
        const u = await ctx.store.users.get(auth.appId, params.userId);
        return u ? { status: 200, body: userView(u) } : noUser();
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/users/:userId',
      operationId: 'updateUser',
      summary: 'Update a user’s display name, its data, or both',
      tags: [server],
      params: UserParams,
      body: UpdateUserBody,
      auth: apiKey,
      responses: { 200: { description: 'Updated', schema: User }, 400: { description: 'Invalid fields' }, ...apiKeyErrors, 404: { description: 'No such user' } },
      handler: async ({ params, body, auth }) => {
        const problem = customDataProblem(body.data, '/body/data');
        if (problem) return problem;
        const u = await ctx.store.users.get(auth.appId, params.userId);
        if (!u) return noUser();
        const updated: ChatUser = { ...u, displayName: body.displayName ?? u.displayName, updatedAt: ctx.now().toISOString() };
        if (body.data !== undefined) {
          const data = storedData(body.data);
          if (data === undefined) delete updated.data;
          else updated.data = data;
        }
        if ((await ctx.store.users.update(updated)) === 'not-found') return noUser();
        return { status: 200, body: userView(updated) };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/users/:userId',
      operationId: 'deleteUser',
      summary: 'Delete a user: its sign-ins end, it leaves every chat, its sockets close (4500)',
      description: 'Messages it sent stay in their chats with its senderId.',
      tags: [server],
      params: UserParams,
      auth: apiKey,
      responses: { 204: { description: 'Deleted' }, 400: { description: 'userId is not a UUID' }, ...apiKeyErrors, 404: { description: 'No such user' } },
      handler: async ({ params, auth }) => {
        if (!(await ctx.store.users.get(auth.appId, params.userId))) return noUser();
        await ctx.store.userSessions.revokeAllForUser(auth.appId, params.userId, ctx.now().toISOString());
        await ctx.chats.forgetUser(auth.appId, params.userId);
        const event = { type: 'user.deleted', data: { userId: params.userId }, check: { kind: 'user' as const, userId: params.userId, present: false } };
        await changeWithEvents(ctx.webhooks, auth.appId, [event], (events) => ctx.store.users.delete(auth.appId, params.userId, { events }), (r) => r === 'deleted');
        ctx.usage.userDeleted(auth.appId);
        ctx.disconnectUser(auth.appId, params.userId);
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/users/refresh',
      operationId: 'refreshUser',
      summary: 'Exchange a user refresh token for a new JWT and refresh token (callable from the browser)',
      description: 'The refresh token rotates. Presenting one that was already used ends that sign-in (REFRESH_TOKEN_REUSED).',
      tags: ['users (browser, user JWT)'],
      body: RefreshBody,
      responses: { 200: { description: 'New pair', schema: UserSession }, 400: { description: 'Invalid fields' }, 401: { description: 'Refresh token unknown, expired, ended or reused, or its application deleted' }, 403: { description: 'The user is banned (USER_BANNED): no new pair' }, 429: { description: 'Too many refreshes from this address (RATE_LIMITED, with Retry-After)' } },
      handler: async ({ body, request }) => {
        const limited = ctx.admitRefresh(request.ip);
        if (limited) return limited;
        const appId = appOf(body.refreshToken);
        if (!appId) return new ApiError('REFRESH_TOKEN_INVALID', 'refresh token is not valid');
        // Sign-ins end with their application (user deletions revoke them in the store).
        if (!(await ctx.sessions.appLive(appId))) return new ApiError('REFRESH_TOKEN_INVALID', 'the application of this refresh token was deleted');
        const next = newRefreshToken(appId);
        const result = await ctx.store.userSessions.rotate(appId, hash(body.refreshToken), hash(next), ctx.now().toISOString());
        switch (result.kind) {
          case 'rotated': {
            // The rotation is made (the presented token is spent either way): a banned user gets no new pair.
            const banned = await ctx.bans.refusal(appId, result.userId);
            if (banned) return banned;
            return { status: 200, body: { jwt: ctx.tokens.issue(appId, result.userId), refreshToken: next, userId: result.userId, expiresIn: ctx.tokens.ttlSeconds } };
          }
          case 'reused':
            return new ApiError('REFRESH_TOKEN_REUSED', 'this refresh token was already used; the sign-in is ended, sign in again');
          case 'invalid':
            return new ApiError('REFRESH_TOKEN_INVALID', 'refresh token is unknown, expired or its sign-in ended');
          default:
            return result satisfies never;
        }
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/users/me',
      operationId: 'me',
      summary: 'The signed-in user',
      tags: ['users (browser, user JWT)'],
      // authenticateUser also counts the user's requests (RATE_LIMITED).
      auth: { verify: ctx.authenticateUser, security: 'userJwt', responses: { 403: { description: 'The user is banned (USER_BANNED)' }, 429: { description: "Over this user's request budget (RATE_LIMITED, with Retry-After)" } } },
      responses: { 200: { description: 'The user', schema: User }, 401: { description: 'JWT missing, invalid or expired' }, 404: { description: 'The user was deleted' } },
      handler: async ({ auth }) => {
        const u = await ctx.store.users.get(auth.appId, auth.userId);
        return u ? { status: 200, body: userView(u) } : noUser();
      },
    }),
  ];
}
