import { randomUUID } from 'node:crypto';
import { ApiError } from '../../common/errors/index.ts';
import { defineRoute, type AnyRoute, type RequestInfo } from '../../common/http/index.ts';
import { burnPasswordCheck, hashPassword, verifyPassword } from '../auth/passwords.ts';
import { hashSecret, newRefreshToken } from '../auth/secrets.ts';
import { ACCESS_TOKEN_TTL_SECONDS } from '../auth/tokens.ts';
import { LIMITS, type ControlContext } from '../context.ts';
import type { Account } from '../store/index.ts';
import { LoginBody, LoginResponse, LogoutBody, RefreshBody, RefreshResponse, RegisterBody, RegisterResponse } from './schemas.ts';

const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** Starts a session (a refresh-token family) and returns its first token pair. */
export async function startSession(ctx: ControlContext, accountId: string) {
  const now = ctx.now();
  const refreshToken = newRefreshToken();
  const familyId = randomUUID();
  const expiresAt = new Date(now.getTime() + LIMITS.sessionSeconds * 1000).toISOString();
  await ctx.store.sessions.createFamily(
    { id: familyId, accountId, createdAt: now.toISOString(), expiresAt },
    { hash: hashSecret(refreshToken), familyId, accountId, expiresAt },
  );
  return { sessionId: familyId, accessToken: ctx.tokens.issueAccess(accountId, familyId), refreshToken };
}

function throttleAddress(ctx: ControlContext, request: RequestInfo): ApiError | undefined {
  const decision = ctx.throttles.authPerAddress.hit(request.ip);
  if (decision.allowed) return undefined;
  return new ApiError('RATE_LIMITED', 'too many attempts from this address; retry later', { retryAfterSeconds: decision.retryAfterSeconds });
}

export function authRoutes(ctx: ControlContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/auth/register',
      operationId: 'register',
      summary: 'Register a dashboard account',
      tags: ['auth'],
      body: RegisterBody,
      responses: {
        201: { description: 'Account created; signed in', schema: RegisterResponse },
        400: { description: 'Invalid fields' },
        409: { description: 'An account with this e-mail exists (ACCOUNT_EXISTS); log in instead' },
        429: { description: 'Too many attempts from this address' },
      },
      handler: async ({ body, request }) => {
        const limited = throttleAddress(ctx, request);
        if (limited) return limited;
        const email = normalizeEmail(body.email);
        if (await ctx.store.accounts.getByEmail(email)) return new ApiError('ACCOUNT_EXISTS', 'an account with this e-mail exists; log in');
        const { hash, salt } = await hashPassword(body.password);
        const now = ctx.now().toISOString();
        const account: Account = {
          id: randomUUID(),
          email,
          companyName: body.companyName,
          role: 'CLIENT',
          passwordHash: hash,
          passwordSalt: salt,
          createdAt: now,
          updatedAt: now,
        };
        if ((await ctx.store.accounts.create(account)) === 'exists') return new ApiError('ACCOUNT_EXISTS', 'an account with this e-mail exists; log in');
        const session = await startSession(ctx, account.id);
        ctx.log.info({ accountId: account.id }, 'account registered');
        return {
          status: 201,
          body: { accessToken: session.accessToken, email, role: 'CLIENT', expiresIn: ACCESS_TOKEN_TTL_SECONDS, refreshToken: session.refreshToken },
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/login',
      operationId: 'login',
      summary: 'Log in to a dashboard account',
      tags: ['auth'],
      body: LoginBody,
      responses: {
        200: { description: 'Signed in, or (`mfaRequired: true`) the password was right and a code is needed: POST /api/auth/mfa/verify', schema: LoginResponse },
        400: { description: 'Invalid fields' },
        401: { description: 'Wrong e-mail or password (INVALID_CREDENTIALS)' },
        429: { description: 'Too many failures for this account from this address (each further attempt waits twice as long), or attempts from this address; see Retry-After' },
      },
      handler: async ({ body, request }) => {
        const limited = throttleAddress(ctx, request);
        if (limited) return limited;
        const email = normalizeEmail(body.email);
        const guesses = ctx.throttles.passwordGuesses;
        // Counted before the (slow) password check, so concurrent guesses cannot all pass the limit;
        // a success clears the count. Per account and address: the owner elsewhere is not locked out.
        const attempt = guesses.attempt(email, request.ip);
        if (!attempt.allowed) {
          return new ApiError('RATE_LIMITED', 'too many failed logins for this account from this address; retry later', { retryAfterSeconds: attempt.retryAfterSeconds });
        }
        const account = await ctx.store.accounts.getByEmail(email);
        const ok = account ? await verifyPassword(body.password, account.passwordHash, account.passwordSalt) : await burnPasswordCheck(body.password);
        if (!account || !ok) {
          guesses.failed(email, request.ip);
          return new ApiError('INVALID_CREDENTIALS', 'e-mail or password is wrong');
        }
        guesses.succeeded(email, request.ip);
        // With a second factor on, the password opens no session: a single-use challenge does, with a code.
        if ((await ctx.store.mfa.get(account.id))?.secret) {
          return { status: 200, body: { mfaRequired: true, mfaToken: ctx.tokens.issueMfa(account.id, ctx.config.MFA_TOKEN_TTL_SECONDS), email: account.email, role: 'CLIENT' } };
        }
        const session = await startSession(ctx, account.id);
        // A password change that committed while this password was being checked has already ended
        // the account's other sessions; it must end this one too, or the old password would keep one.
        const current = await ctx.store.accounts.get(account.id);
        if (current?.passwordHash !== account.passwordHash) {
          await ctx.store.sessions.revokeFamily(session.sessionId, ctx.now().toISOString());
          return new ApiError('INVALID_CREDENTIALS', 'e-mail or password is wrong');
        }
        return { status: 200, body: { mfaRequired: false, accessToken: session.accessToken, email: account.email, role: 'CLIENT', refreshToken: session.refreshToken } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/refresh',
      operationId: 'refresh',
      summary: 'Exchange a refresh token for a new token pair',
      description:
        'Send the session’s last access token (it may be expired) as bearer and its refresh token in the body. ' +
        'The refresh token rotates: the response carries a new one and the old one stops working. Presenting a ' +
        'refresh token that was already used revokes the whole session (REFRESH_TOKEN_REUSED).',
      tags: ['auth'],
      body: RefreshBody,
      auth: { verify: ctx.tokens.authenticateForRefresh, security: 'accessToken' },
      responses: {
        200: { description: 'New token pair', schema: RefreshResponse },
        400: { description: 'Invalid fields' },
        401: { description: 'Token missing or invalid, refresh token unknown, expired, of another session, or reused' },
      },
      handler: async ({ body, auth }) => {
        const hash = hashSecret(body.refreshToken);
        const record = await ctx.store.sessions.findToken(hash);
        if (!record || record.familyId !== auth.sessionId) return new ApiError('REFRESH_TOKEN_INVALID', 'refresh token is unknown or of another session');
        const next = newRefreshToken();
        const now = ctx.now().toISOString();
        const result = await ctx.store.sessions.rotate(hash, { hash: hashSecret(next), expiresAt: record.expiresAt }, now);
        switch (result.kind) {
          case 'rotated':
            return {
              status: 200,
              body: { accessToken: ctx.tokens.issueAccess(result.accountId, result.familyId), refreshToken: next, expiresIn: ACCESS_TOKEN_TTL_SECONDS },
            };
          case 'reused':
            ctx.log.warn({ sessionId: result.familyId }, 'refresh token reused; session revoked');
            return new ApiError('REFRESH_TOKEN_REUSED', 'this refresh token was already used; the session is revoked, log in again');
          case 'invalid':
            return new ApiError('REFRESH_TOKEN_INVALID', 'refresh token is expired or its session ended');
          default:
            return result satisfies never;
        }
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/logout',
      operationId: 'logout',
      summary: 'End the session',
      description: 'Ends the session of the access token (and of `refreshToken`, if given and of the same account): its access and refresh tokens stop working at once.',
      tags: ['auth'],
      body: LogoutBody,
      bodyOptional: true,
      auth: { verify: ctx.tokens.authenticate, security: 'accessToken' },
      responses: { 204: { description: 'Session ended' }, 400: { description: 'Invalid fields' }, 401: { description: 'Token missing or invalid' } },
      handler: async ({ body, auth }) => {
        const now = ctx.now().toISOString();
        await ctx.store.sessions.revokeFamily(auth.sessionId, now);
        if (body?.refreshToken) {
          const record = await ctx.store.sessions.findToken(hashSecret(body.refreshToken));
          if (record && record.accountId === auth.accountId) await ctx.store.sessions.revokeFamily(record.familyId, now);
        }
        return { status: 204 };
      },
    }),
  ];
}
