import { randomUUID } from 'node:crypto';
import { ApiError } from '../../common/errors/index.ts';
import { bearerToken, publicKeyOf, TokenIssuer, TokenVerifier, type KeyRing } from '../../common/jwt/index.ts';
import type { RequestInfo } from '../../common/http/index.ts';
import type { ControlStore } from '../store/index.ts';

export const ACCESS_TOKEN_TTL_SECONDS = 900;
/** Audience of management access tokens; API keys carry a cluster name instead. */
export const MANAGEMENT_AUDIENCE = 'management';
/** Audience of login challenges (`mfaToken`): accepted by `POST /api/auth/mfa/verify` only. */
export const MFA_AUDIENCE = 'management-mfa';
import { API_KEY_ISSUER } from '../../common/api-keys/index.ts';
/** The control service signs access tokens and API keys under one issuer name. */
export const CONTROL_ISSUER = API_KEY_ISSUER;

export interface AccountPrincipal {
  accountId: string;
  sessionId: string;
}

/**
 * Issues and checks the control service's JWTs. An access token names its session (`sid`), and
 * every request checks that session is live: logout and refresh-token theft end it at once.
 *
 * Keys (see KeyRing): tokens are signed by the ring's signing key of the moment; an access token
 * verifies while its key is not retired. Refresh accepts the session's last access token even when
 * its key has retired since, because the refresh token, not that access token, proves the caller:
 * a key rotation logs nobody out of the dashboard.
 */
export class ControlTokens {
  readonly issuer: TokenIssuer;
  private readonly access: TokenVerifier;
  /** Same checks but expiry and key retirement ignored: refresh accepts the session's last access token. */
  private readonly accessForRefresh: TokenVerifier;
  /** Login challenges (`mfaToken`): their own kind and audience, so they are bearer nowhere. */
  private readonly mfa: TokenVerifier;

  constructor(
    keys: KeyRing,
    private readonly store: ControlStore,
  ) {
    this.issuer = new TokenIssuer(() => keys.signing(), CONTROL_ISSUER);
    const options = { kind: 'access' as const, audience: MANAGEMENT_AUDIENCE, issuer: CONTROL_ISSUER, requireExpiry: true };
    const known = keys.all().map(publicKeyOf);
    this.access = new TokenVerifier(options, known);
    this.accessForRefresh = new TokenVerifier({ ...options, ignoreExpiration: true, ignoreRetirement: true }, known);
    this.mfa = new TokenVerifier({ ...options, kind: 'mfa', audience: MFA_AUDIENCE }, known);
    keys.onChange((all) => {
      for (const key of all.map(publicKeyOf)) {
        this.access.addKey(key);
        this.accessForRefresh.addKey(key);
        this.mfa.addKey(key);
      }
    });
  }

  issueAccess(accountId: string, sessionId: string): string {
    return this.issuer.issue({
      kind: 'access',
      subject: accountId,
      audience: MANAGEMENT_AUDIENCE,
      expiresInSeconds: ACCESS_TOKEN_TTL_SECONDS,
      claims: { sid: sessionId },
    });
  }

  /** A login challenge: proves the password was right, for `ttlSeconds`; the second factor completes it. */
  issueMfa(accountId: string, ttlSeconds: number): string {
    return this.issuer.issue({ kind: 'mfa', subject: accountId, audience: MFA_AUDIENCE, expiresInSeconds: ttlSeconds, jwtId: randomUUID() });
  }

  /** The account and challenge id of a genuine, unexpired `mfaToken` (whether it was used is the store's). */
  verifyMfa(token: string): { accountId: string; challengeId: string; expiresAtMs: number } | ApiError {
    const claims = this.mfa.verify(token);
    if (claims instanceof ApiError) return claims;
    if (typeof claims.jti !== 'string' || typeof claims.exp !== 'number') return new ApiError('TOKEN_INVALID', 'not a login challenge');
    return { accountId: claims.sub, challengeId: claims.jti, expiresAtMs: claims.exp * 1000 };
  }

  /** The authenticator of every management route but register and login. */
  readonly authenticate = async (request: RequestInfo): Promise<AccountPrincipal | ApiError> => {
    return this.check(request, this.access);
  };

  /** For refresh: the access token may be expired, but must be genuine and of a live session. */
  readonly authenticateForRefresh = async (request: RequestInfo): Promise<AccountPrincipal | ApiError> => {
    return this.check(request, this.accessForRefresh);
  };

  private async check(request: RequestInfo, verifier: TokenVerifier): Promise<AccountPrincipal | ApiError> {
    const token = bearerToken(request.headers['authorization']);
    if (!token) return new ApiError('AUTH_REQUIRED', 'send Authorization: Bearer <accessToken>');
    const claims = verifier.verify(token);
    if (claims instanceof ApiError) return claims;
    const sessionId = claims.sid;
    if (typeof sessionId !== 'string') return new ApiError('TOKEN_INVALID', 'access token has no session');
    const family = await this.store.sessions.getFamily(sessionId);
    if (!family || family.revokedAt || family.accountId !== claims.sub) return new ApiError('TOKEN_INVALID', 'the session of this token has ended');
    return { accountId: claims.sub, sessionId };
  }
}
