import { ApiError } from '../errors/index.ts';
import { bearerToken, TokenVerifier, type PublicKey } from '../jwt/index.ts';
import type { RequestInfo } from '../http/index.ts';

/** Where a node learns whether a key is still active. Implemented by the control store. */
export interface KeyStatusSource {
  isActive(appId: string, keyId: string): Promise<boolean>;
}

/** Where a node learns the control service's public signing keys. */
export interface PublicKeySource {
  publicKeys(): Promise<PublicKey[]>;
}

export interface ApiKeyPrincipal {
  appId: string;
  keyId: string;
}

export const API_KEY_ISSUER = 'chat-control';

export interface ApiKeyVerifierOptions {
  clusterName: string;
  keys: PublicKeySource;
  status: KeyStatusSource;
  /** How long a status answer is trusted; revocation is seen at most this late (plus one lookup). */
  statusTtlMs: number;
  now?: () => number;
}

/**
 * Verifies API keys on a cluster node: EdDSA signature by the control service, `aud` equal to this
 * cluster's name, kind `api_key`, and the key not revoked. Signatures are checked offline; the
 * revocation status is cached for at most `statusTtlMs`, and `invalidate` drops it at once when a
 * revocation is announced (in-process, or by the cluster bus).
 */
export class ApiKeyVerifier {
  private readonly tokens: TokenVerifier;
  private readonly status = new Map<string, { active: boolean; until: number }>();
  private readonly now: () => number;
  private keysRefreshedAt = 0;

  constructor(private readonly options: ApiKeyVerifierOptions) {
    // API keys never expire, so no key that signed one ever retires for them: a rotation of the
    // control service's key leaves them working; each is ended by revoking it.
    this.tokens = new TokenVerifier({ kind: 'api_key', audience: options.clusterName, issuer: API_KEY_ISSUER, requireExpiry: false, ignoreRetirement: true });
    this.now = options.now ?? Date.now;
  }

  /** Loads the public keys; called at start and again when a token names an unknown `kid`. */
  async refreshKeys(): Promise<void> {
    this.keysRefreshedAt = this.now();
    for (const key of await this.options.keys.publicKeys()) this.tokens.addKey(key);
  }

  invalidate(appId: string, keyId: string): void {
    this.status.delete(`${appId}/${keyId}`);
  }

  async verify(token: string): Promise<ApiKeyPrincipal | ApiError> {
    const kid = TokenVerifier.kidOf(token);
    // Unknown kid: the control service may have a key we have not loaded yet. Look again, at most
    // every 5 s, so forged kids cannot turn every request into a key fetch.
    if (kid !== undefined && !this.tokens.hasKey(kid) && (this.tokens.keyCount === 0 || this.now() - this.keysRefreshedAt > 5_000)) {
      await this.refreshKeys();
    }
    const claims = this.tokens.verify(token);
    if (claims instanceof ApiError) return new ApiError('API_KEY_INVALID', 'API key is invalid or for another cluster');
    if (typeof claims.jti !== 'string') return new ApiError('API_KEY_INVALID', 'API key has no key id');
    const cacheKey = `${claims.sub}/${claims.jti}`;
    const now = this.now();
    let entry = this.status.get(cacheKey);
    if (!entry || entry.until <= now) {
      entry = { active: await this.options.status.isActive(claims.sub, claims.jti), until: now + this.options.statusTtlMs };
      this.status.set(cacheKey, entry);
      if (this.status.size > 100_000) this.status.clear();
    }
    if (!entry.active) return new ApiError('API_KEY_INVALID', 'API key is revoked');
    return { appId: claims.sub, keyId: claims.jti };
  }

  /** Authenticator for routes called by an integrator's backend with `Authorization: Bearer <apiKey>`. */
  readonly authenticate = async (request: RequestInfo): Promise<ApiKeyPrincipal | ApiError> => {
    const token = bearerToken(request.headers['authorization']);
    if (!token) return new ApiError('AUTH_REQUIRED', 'send Authorization: Bearer <apiKey>');
    return this.verify(token);
  };
}
