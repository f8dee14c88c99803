import { ApiError } from '../../common/errors/index.ts';
import { defineRoute, type AnyRoute } from '../../common/http/index.ts';
import { checkCurrentPassword } from '../auth/current-password.ts';
import { hashPassword } from '../auth/passwords.ts';
import type { ControlContext } from '../context.ts';
import type { Account } from '../store/index.ts';
import { Profile, UpdateProfileBody } from './schemas.ts';

const view = (a: Account) => ({ id: a.id, companyName: a.companyName, email: a.email, role: a.role, createdAt: a.createdAt, updatedAt: a.updatedAt });

/**
 * Runs `fn` after every earlier call with the same key has finished. A profile update reads the
 * account, checks `currentPassword` and hashes the new one (slow) before writing the whole record;
 * serialising per account keeps two updates from overwriting each other's fields (a company-name
 * change could otherwise write back the old password hash) and checks `currentPassword` against
 * the current hash.
 */
function keyedQueue() {
  const tails = new Map<string, Promise<void>>();
  return <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const run = (tails.get(key) ?? Promise.resolve()).then(fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}

export function profileRoutes(ctx: ControlContext): AnyRoute[] {
  const auth = { verify: ctx.tokens.authenticate, security: 'accessToken' };
  const perAccount = keyedQueue();
  const gone = () => new ApiError('TOKEN_INVALID', 'the account of this token no longer exists');
  return [
    defineRoute({
      method: 'GET',
      path: '/api/client/profile',
      operationId: 'getProfile',
      summary: 'Get the account’s profile',
      tags: ['profile'],
      auth,
      responses: { 200: { description: 'Profile', schema: Profile }, 401: { description: 'Token missing or invalid' } },
      handler: async ({ auth }) => {
        const account = await ctx.store.accounts.get(auth.accountId);
        return account ? { status: 200, body: view(account) } : gone();
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/client/profile',
      operationId: 'updateProfile',
      summary: 'Update company name, e-mail or password',
      description:
        'Send only the fields to change. Changing `email` or `password` requires `currentPassword`; a password change ends every other session of the account.',
      tags: ['profile'],
      body: UpdateProfileBody,
      auth,
      responses: {
        200: { description: 'Updated profile', schema: Profile },
        400: { description: 'Invalid fields' },
        401: { description: 'Token missing or invalid, or currentPassword wrong (INVALID_CREDENTIALS)' },
        409: { description: 'The new e-mail belongs to another account (ACCOUNT_EXISTS)' },
        429: { description: 'Too many wrong currentPassword guesses for this account from this address (RATE_LIMITED, with Retry-After)' },
      },
      handler: ({ body, auth, request }) => perAccount(auth.accountId, async () => {
        const account = await ctx.store.accounts.get(auth.accountId);
        if (!account) return gone();
        const email = body.email?.trim().toLowerCase();
        const sensitive = (email !== undefined && email !== account.email) || body.password !== undefined;
        if (sensitive) {
          if (body.currentPassword === undefined) {
            return new ApiError('VALIDATION_FAILED', 'currentPassword is required to change email or password', {
              errors: [{ path: '/body/currentPassword', message: 'required' }],
            });
          }
          const wrong = await checkCurrentPassword(ctx, account, body.currentPassword, request);
          if (wrong) return wrong;
        }
        const updated: Account = { ...account, updatedAt: ctx.now().toISOString() };
        if (body.companyName !== undefined) updated.companyName = body.companyName;
        if (email !== undefined) updated.email = email;
        if (body.password !== undefined) {
          const { hash, salt } = await hashPassword(body.password);
          updated.passwordHash = hash;
          updated.passwordSalt = salt;
        }
        const result = await ctx.store.accounts.update(updated);
        if (result === 'email-taken') return new ApiError('ACCOUNT_EXISTS', 'another account uses this e-mail');
        if (result === 'not-found') return gone();
        if (body.password !== undefined) {
          // Every other session ends; the caller's own stays so the dashboard is not logged out.
          const now = ctx.now().toISOString();
          await ctx.store.sessions.revokeAllForAccount(account.id, now, auth.sessionId);
        }
        return { status: 200, body: view(updated) };
      }),
    }),
  ];
}
