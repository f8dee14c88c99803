import { ApiError } from '../../common/errors/index.ts';
import type { RequestInfo } from '../../common/http/index.ts';
import type { ControlContext } from '../context.ts';
import type { Account } from '../store/index.ts';
import { verifyPassword } from './passwords.ts';

/**
 * Checks `currentPassword` for a sensitive change of a signed-in account (e-mail, password, turning
 * MFA off). Guesses are throttled like logins, per account and address: a stolen access token must
 * not become a way to find the password. Undefined when it is right.
 */
export async function checkCurrentPassword(ctx: ControlContext, account: Account, password: string, request: RequestInfo): Promise<ApiError | undefined> {
  const attempt = ctx.throttles.passwordGuesses.attempt(account.email, request.ip);
  if (!attempt.allowed) return new ApiError('RATE_LIMITED', 'too many wrong passwords for this account from this address; retry later', { retryAfterSeconds: attempt.retryAfterSeconds });
  if (!(await verifyPassword(password, account.passwordHash, account.passwordSalt))) {
    ctx.throttles.passwordGuesses.failed(account.email, request.ip);
    return new ApiError('INVALID_CREDENTIALS', 'currentPassword is wrong');
  }
  ctx.throttles.passwordGuesses.succeeded(account.email, request.ip);
  return undefined;
}
