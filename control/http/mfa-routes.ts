import { ApiError } from '../../common/errors/index.ts';
import { defineRoute, type AnyRoute, type RequestInfo } from '../../common/http/index.ts';
import { checkCurrentPassword } from '../auth/current-password.ts';
import { newEnrolment, newRecoveryCodes, recoveryHash, stepOf } from '../auth/totp.ts';
import { ACCESS_TOKEN_TTL_SECONDS } from '../auth/tokens.ts';
import type { ControlContext } from '../context.ts';
import { startSession } from './auth-routes.ts';
import { MfaConfirmBody, MfaDisableBody, MfaEnrolment, MfaRecoveryCodes, MfaSession, MfaStatus, MfaVerifyBody } from './schemas.ts';

/** Wrong codes one login challenge takes before it is used up (the login must start again). */
const CODES_PER_CHALLENGE = 5;

/**
 * Multi-factor sign-in (TOTP, RFC 6238, with single-use recovery codes). A code of the
 * authenticator app is accepted once: its time step must be later than the last one accepted, so a
 * code seen over a shoulder cannot be replayed within its 90 s of validity. Code guesses share the
 * login's throttle (per account and address, with backoff), and each challenge takes at most
 * CODES_PER_CHALLENGE wrong ones.
 */
export function mfaRoutes(ctx: ControlContext): AnyRoute[] {
  const auth = { verify: ctx.tokens.authenticate, security: 'accessToken' as const };
  const wrongCodes = new Map<string, { n: number; expiresAtMs: number }>();
  const guessKey = (accountId: string) => `mfa:${accountId}`;

  /** Takes a code guess of the account from the request's address, or refuses it (login throttle, backoff). */
  function codeGuess(accountId: string, request: RequestInfo): ApiError | undefined {
    const attempt = ctx.throttles.passwordGuesses.attempt(guessKey(accountId), request.ip);
    return attempt.allowed ? undefined : new ApiError('RATE_LIMITED', 'too many wrong codes for this account from this address; retry later', { retryAfterSeconds: attempt.retryAfterSeconds });
  }

  /** Checks a code (TOTP, or a recovery code when `recovery`) and uses it up; undefined when taken. */
  async function useCode(accountId: string, secret: string, code: string, request: RequestInfo, recovery: boolean): Promise<ApiError | undefined> {
    const limited = codeGuess(accountId, request);
    if (limited) return limited;
    const now = ctx.now();
    const step = stepOf(secret, code.trim(), now.getTime());
    let ok = step !== undefined && (await ctx.store.mfa.useStep(accountId, step));
    if (!ok && recovery) {
      const hash = recoveryHash(code);
      ok = hash !== undefined && (await ctx.store.mfa.useRecoveryCode(accountId, hash, now.toISOString()));
    }
    if (!ok) {
      ctx.throttles.passwordGuesses.failed(guessKey(accountId), request.ip);
      return new ApiError('MFA_CODE_INVALID', step !== undefined ? 'this code was used already; wait for the next one' : 'the code is wrong');
    }
    ctx.throttles.passwordGuesses.succeeded(guessKey(accountId), request.ip);
    return undefined;
  }

  /**
   * Counts a wrong code against a login challenge; at CODES_PER_CHALLENGE the challenge is used up
   * in the store (so no process takes it again) and the refusal says to log in again.
   */
  async function wrongCodeFor(challengeId: string, expiresAtMs: number): Promise<ApiError | undefined> {
    const now = Date.now();
    for (const [id, entry] of wrongCodes) if (entry.expiresAtMs < now) wrongCodes.delete(id);
    const entry = wrongCodes.get(challengeId) ?? { n: 0, expiresAtMs };
    entry.n++;
    wrongCodes.set(challengeId, entry);
    if (entry.n < CODES_PER_CHALLENGE) return undefined;
    await ctx.store.mfa.useChallenge(challengeId, expiresAtMs);
    wrongCodes.delete(challengeId);
    return new ApiError('TOKEN_INVALID', `${CODES_PER_CHALLENGE} wrong codes: this login challenge is used up; log in again`);
  }

  return [
    defineRoute({
      method: 'GET',
      path: '/api/client/mfa',
      operationId: 'getMfa',
      summary: 'Whether multi-factor sign-in is on, and how many recovery codes are left',
      tags: ['profile'],
      auth,
      responses: { 200: { description: 'MFA status', schema: MfaStatus }, 401: { description: 'Token missing or invalid' } },
      handler: async ({ auth }) => {
        const state = await ctx.store.mfa.get(auth.accountId);
        const body = state?.secret
          ? { enabled: true, enabledAt: state.enabledAt!, recoveryCodesLeft: await ctx.store.mfa.unusedRecoveryCodes(auth.accountId) }
          : { enabled: false, recoveryCodesLeft: 0 };
        return { status: 200, body };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/client/mfa/totp',
      operationId: 'enrolTotp',
      summary: 'Start a TOTP enrolment: a new secret, its otpauth URI and QR code (no effect until confirmed)',
      tags: ['profile'],
      auth,
      responses: {
        201: { description: 'Pending enrolment; a later one replaces it', schema: MfaEnrolment },
        401: { description: 'Token missing or invalid' },
        409: { description: 'MFA is on already (MFA_ALREADY_ENABLED): turn it off first' },
      },
      handler: async ({ auth }) => {
        const account = await ctx.store.accounts.get(auth.accountId);
        if (!account) return new ApiError('TOKEN_INVALID', 'the account of this token no longer exists');
        const enrolment = await newEnrolment(account.email);
        if ((await ctx.store.mfa.begin(auth.accountId, enrolment.secret)) === 'enabled') return new ApiError('MFA_ALREADY_ENABLED', 'multi-factor sign-in is on already; turn it off to enrol again');
        return { status: 201, body: enrolment };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/client/mfa/totp/confirm',
      operationId: 'confirmTotp',
      summary: 'Confirm the pending enrolment with a current code: MFA is on, and ten recovery codes are returned once',
      tags: ['profile'],
      auth,
      body: MfaConfirmBody,
      responses: {
        200: { description: 'MFA is on', schema: MfaRecoveryCodes },
        400: { description: 'Invalid fields, or the code is wrong (MFA_CODE_INVALID)' },
        401: { description: 'Token missing or invalid' },
        409: { description: 'No enrolment is pending (MFA_NOT_PENDING)' },
        429: { description: 'Too many wrong codes for this account from this address (RATE_LIMITED, with Retry-After)' },
      },
      handler: async ({ auth, body, request }) => {
        const state = await ctx.store.mfa.get(auth.accountId);
        if (!state?.pendingSecret) return new ApiError('MFA_NOT_PENDING', state?.secret ? 'multi-factor sign-in is on already' : 'start an enrolment first: POST /api/client/mfa/totp');
        const limited = codeGuess(auth.accountId, request);
        if (limited) return limited;
        const now = ctx.now();
        const step = stepOf(state.pendingSecret, body.code.trim(), now.getTime());
        if (step === undefined) return new ApiError('MFA_CODE_INVALID', 'the code is wrong; check the time on the device');
        ctx.throttles.passwordGuesses.succeeded(guessKey(auth.accountId), request.ip);
        const codes = newRecoveryCodes();
        const hashes = codes.map((c) => recoveryHash(c)!);
        if ((await ctx.store.mfa.confirm(auth.accountId, state.pendingSecret, hashes, step, now.toISOString())) === 'stale') {
          return new ApiError('MFA_NOT_PENDING', 'another enrolment replaced this one, or it was confirmed already');
        }
        ctx.log.info({ accountId: auth.accountId }, 'mfa enabled');
        return { status: 200, body: { recoveryCodes: codes } };
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/client/mfa/totp',
      operationId: 'disableTotp',
      summary: 'Turn multi-factor sign-in off (the password and a code, or a recovery code, are required)',
      tags: ['profile'],
      auth,
      body: MfaDisableBody,
      responses: {
        204: { description: 'MFA is off; the secret and recovery codes are forgotten' },
        400: { description: 'Invalid fields, or the code is wrong (MFA_CODE_INVALID)' },
        401: { description: 'Token missing or invalid, or currentPassword wrong (INVALID_CREDENTIALS)' },
        409: { description: 'MFA is not on (MFA_NOT_ENABLED)' },
        429: { description: 'Too many wrong passwords or codes for this account from this address (RATE_LIMITED, with Retry-After)' },
      },
      handler: async ({ auth, body, request }) => {
        const account = await ctx.store.accounts.get(auth.accountId);
        if (!account) return new ApiError('TOKEN_INVALID', 'the account of this token no longer exists');
        const state = await ctx.store.mfa.get(auth.accountId);
        if (!state?.secret) return new ApiError('MFA_NOT_ENABLED', 'multi-factor sign-in is not on');
        const wrongPassword = await checkCurrentPassword(ctx, account, body.currentPassword, request);
        if (wrongPassword) return wrongPassword;
        const wrong = await useCode(auth.accountId, state.secret, body.code, request, true);
        if (wrong) return wrong;
        await ctx.store.mfa.disable(auth.accountId);
        ctx.log.info({ accountId: auth.accountId }, 'mfa disabled');
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/mfa/verify',
      operationId: 'verifyMfa',
      summary: 'Complete a login that answered mfaRequired: the mfaToken and a code (or an unused recovery code) give the session',
      tags: ['auth'],
      body: MfaVerifyBody,
      responses: {
        200: { description: 'Signed in', schema: MfaSession },
        400: { description: 'Invalid fields, or the code is wrong or used already (MFA_CODE_INVALID)' },
        401: { description: 'The mfaToken is invalid, expired (TOKEN_EXPIRED), used already or used up by wrong codes (TOKEN_INVALID); log in again' },
        429: { description: 'Too many wrong codes for this account from this address (RATE_LIMITED, with Retry-After)' },
      },
      handler: async ({ body, request }) => {
        const challenge = ctx.tokens.verifyMfa(body.mfaToken);
        if (challenge instanceof ApiError) return challenge;
        const { accountId, challengeId, expiresAtMs } = challenge;
        // Used (or used up) challenges are recorded by the store: one use, across restarts and processes.
        const usedAlready = () => new ApiError('TOKEN_INVALID', 'this login challenge was used already; log in again');
        if (await ctx.store.mfa.challengeUsed(challengeId)) return usedAlready();
        const [account, state] = await Promise.all([ctx.store.accounts.get(accountId), ctx.store.mfa.get(accountId)]);
        if (!account) return new ApiError('TOKEN_INVALID', 'the account of this login no longer exists');
        // Without a secret, MFA was turned off since the password was checked: no code is needed,
        // but the challenge still has its one use.
        if (state?.secret) {
          const wrong = await useCode(accountId, state.secret, body.code, request, true);
          if (wrong) {
            const usedUp = wrong.code === 'MFA_CODE_INVALID' ? await wrongCodeFor(challengeId, expiresAtMs) : undefined;
            return usedUp ?? wrong;
          }
        }
        if (!(await ctx.store.mfa.useChallenge(challengeId, expiresAtMs))) return usedAlready();
        wrongCodes.delete(challengeId);
        const session = await startSession(ctx, accountId);
        return {
          status: 200,
          body: { mfaRequired: false, accessToken: session.accessToken, refreshToken: session.refreshToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS, email: account.email, role: 'CLIENT' },
        };
      },
    }),
  ];
}
