import { ApiError, bearerToken, publicKeyOf, TokenIssuer, TokenVerifier, type KeyRing, type RequestInfo } from '../../common/index.ts';

export const NODE_ISSUER = 'chat-node';

export interface UserPrincipal {
  appId: string;
  userId: string;
  /** When the token ends (ms since the epoch): a WebSocket opened with it is closed then (4100). */
  expiresAt: number;
}

/**
 * User JWTs: signed with the cluster's node key (shared through the store by every node), `aud` the
 * cluster's name, kind `user`, `sub` the user, `app` the application. Stateless to verify, so the
 * hot path (every REST call, every WebSocket upgrade) costs a cached signature check. Signed by the
 * ring's signing key of the moment; a JWT verifies while its key is not retired (see KeyRing).
 */
export class UserTokens {
  private readonly issuer: TokenIssuer;
  private readonly verifier: TokenVerifier;

  constructor(
    keys: KeyRing,
    private readonly clusterName: string,
    /** Lifetime of a user JWT (USER_JWT_TTL_SECONDS); the SDK refreshes before it ends. */
    readonly ttlSeconds: number,
  ) {
    this.issuer = new TokenIssuer(() => keys.signing(), NODE_ISSUER);
    this.verifier = new TokenVerifier({ kind: 'user', audience: clusterName, issuer: NODE_ISSUER, requireExpiry: true }, keys.all().map(publicKeyOf));
    keys.onChange((all) => {
      for (const key of all) this.verifier.addKey(publicKeyOf(key));
    });
  }

  issue(appId: string, userId: string): string {
    return this.issuer.issue({ kind: 'user', subject: userId, audience: this.clusterName, expiresInSeconds: this.ttlSeconds, claims: { app: appId } });
  }

  verify(token: string): UserPrincipal | ApiError {
    const claims = this.verifier.verify(token);
    if (claims instanceof ApiError) return claims;
    if (typeof claims.app !== 'string') return new ApiError('TOKEN_INVALID', 'user token names no application');
    return { appId: claims.app, userId: claims.sub, expiresAt: (claims.exp ?? 0) * 1000 };
  }

  readonly authenticate = (request: RequestInfo): UserPrincipal | ApiError => {
    const token = bearerToken(request.headers['authorization']);
    if (!token) return new ApiError('AUTH_REQUIRED', 'send Authorization: Bearer <user JWT>');
    return this.verify(token);
  };
}
