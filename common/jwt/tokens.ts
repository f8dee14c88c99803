import { createDecoder, createSigner, createVerifier, TokenError } from 'fast-jwt';
import { RecentMap } from '../cache/index.ts';
import { ApiError } from '../errors/index.ts';
import type { PublicKey, SigningKey } from './keys.ts';

/**
 * Token kinds. Each kind has its own `kind` claim and audience; a verifier accepts exactly one kind,
 * so an API key never passes as an access token and the reverse.
 */
export type TokenKind = 'access' | 'api_key' | 'user' | 'mfa';

export const ALGORITHM = 'EdDSA';

export interface TokenClaims {
  kind: TokenKind;
  sub: string;
  aud: string;
  iss: string;
  jti?: string;
  iat?: number;
  exp?: number;
  [claim: string]: unknown;
}

export interface IssueOptions {
  kind: TokenKind;
  subject: string;
  audience: string;
  /** Omitted for tokens valid until revoked (API keys). */
  expiresInSeconds?: number;
  jwtId?: string;
  claims?: Record<string, string>;
}

/** Signs tokens with one key, or with whichever key `key()` names at each call (KeyRing.signing). */
export class TokenIssuer {
  private readonly signers = new Map<string, (payload: Record<string, unknown>) => string>();
  constructor(
    private readonly key: SigningKey | (() => SigningKey),
    private readonly issuer: string,
  ) {}

  private sign(payload: Record<string, unknown>): string {
    const key = typeof this.key === 'function' ? this.key() : this.key;
    let sign = this.signers.get(key.kid);
    if (!sign) this.signers.set(key.kid, (sign = createSigner({ key: key.privateKeyPem, algorithm: ALGORITHM, kid: key.kid })));
    return sign(payload);
  }

  issue(options: IssueOptions): string {
    const now = Math.floor(Date.now() / 1000);
    const payload: Record<string, unknown> = {
      ...options.claims,
      kind: options.kind,
      sub: options.subject,
      aud: options.audience,
      iss: this.issuer,
      iat: now,
    };
    if (options.jwtId) payload.jti = options.jwtId;
    if (options.expiresInSeconds !== undefined) payload.exp = now + options.expiresInSeconds;
    return this.sign(payload);
  }
}

const decodeHeader = createDecoder({ complete: true });

export interface VerifierOptions {
  kind: TokenKind;
  audience: string;
  issuer: string;
  /** Whether tokens of this kind must carry `exp` (all but API keys). */
  requireExpiry: boolean;
  /** Accept expired tokens (only to let a session's refresh present its last access token). */
  ignoreExpiration?: boolean;
  /**
   * Accept tokens of keys past their `retiresAt`: only for tokens that never expire (API keys) or
   * that prove nothing alone (the access token a refresh presents beside its refresh token).
   */
  ignoreRetirement?: boolean;
  /** The clock retirement is checked against (ms since the epoch). */
  now?: () => number;
}

/** Most tokens a verifier remembers as verified (each a few hundred bytes); past it, the least recently verified go. */
const VERIFIED_TOKENS = 10_000;

/**
 * Verifies tokens of one kind: algorithm pinned to EdDSA, key chosen by `kid` and not retired (unless
 * `ignoreRetirement`), audience, issuer and (where required) expiry checked.
 *
 * A token that passed is remembered by its exact text, with its key and expiry: the same token
 * again (every REST call of a client carries it) costs one map lookup, where fast-jwt's own cache
 * decodes it and hashes it first (17% of a node's busy time on the sends bench's HTTP round). The
 * same text has the same signature, so nothing is taken on trust; the key's retirement and the
 * token's expiry are checked again at each use against the clock, and a token at or past either
 * goes the whole way, which gives the error.
 */
export class TokenVerifier {
  private readonly byKid = new Map<string, { verify: (token: string) => TokenClaims; retiresAt: number }>();
  private readonly verified = new RecentMap<string, { claims: TokenClaims; kid: string; expiresAt: number }>(VERIFIED_TOKENS);
  private readonly now: () => number;

  constructor(
    private readonly options: VerifierOptions,
    keys: readonly PublicKey[] = [],
  ) {
    this.now = options.now ?? Date.now;
    for (const k of keys) this.addKey(k);
  }

  /** Adds a key, or takes the new `retiresAt` of a key already added. */
  addKey(key: PublicKey): void {
    const retiresAt = key.retiresAt === undefined ? Infinity : Date.parse(key.retiresAt);
    const known = this.byKid.get(key.kid);
    if (known) {
      known.retiresAt = retiresAt;
      return;
    }
    const verify = createVerifier({
      key: key.publicKeyPem,
      algorithms: [ALGORITHM],
      allowedAud: this.options.audience,
      allowedIss: this.options.issuer,
      requiredClaims: this.options.requireExpiry ? ['exp', 'sub', 'kind'] : ['sub', 'kind'],
      cache: 10_000,
      cacheTTL: 60_000,
      ignoreExpiration: this.options.ignoreExpiration ?? false,
    }) as (token: string) => TokenClaims;
    this.byKid.set(key.kid, { verify, retiresAt });
  }

  get keyCount(): number {
    return this.byKid.size;
  }

  hasKey(kid: string): boolean {
    return this.byKid.has(kid);
  }

  /** The `kid` in the token's header, if the token is well-formed enough to have one. */
  static kidOf(token: string): string | undefined {
    try {
      const { header } = decodeHeader(token) as { header: { kid?: unknown } };
      return typeof header.kid === 'string' ? header.kid : undefined;
    } catch {
      return undefined;
    }
  }

  verify(token: string): TokenClaims | ApiError {
    const known = this.verified.get(token);
    if (known) {
      const key = this.byKid.get(known.kid);
      // Expiry by the wall clock, as fast-jwt checks it; retirement by this verifier's clock.
      if (key && (this.options.ignoreRetirement || this.now() < key.retiresAt) && (this.options.ignoreExpiration || Date.now() < known.expiresAt)) return known.claims;
    }
    const kid = TokenVerifier.kidOf(token);
    const key = kid === undefined ? undefined : this.byKid.get(kid);
    if (!key) return new ApiError('TOKEN_INVALID', 'token is malformed or signed by an unknown key');
    if (!this.options.ignoreRetirement && this.now() >= key.retiresAt) return new ApiError('TOKEN_INVALID', 'token is signed by a retired key; sign in again');
    let claims: TokenClaims;
    try {
      claims = key.verify(token);
    } catch (error) {
      if (error instanceof TokenError && error.code === TokenError.codes.expired) return new ApiError('TOKEN_EXPIRED', 'token has expired');
      return new ApiError('TOKEN_INVALID', 'token signature, audience or claims are invalid');
    }
    if (claims.kind !== this.options.kind) return new ApiError('TOKEN_INVALID', `expected a token of kind ${this.options.kind}`);
    if (typeof claims.sub !== 'string') return new ApiError('TOKEN_INVALID', 'token has no subject');
    if (!known) {
      this.verified.set(token, { claims, kid: kid!, expiresAt: typeof claims.exp === 'number' ? claims.exp * 1000 : Infinity });
    }
    return claims;
  }
}

/** Reads `Authorization: Bearer <token>`; undefined when absent or not a bearer credential. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * `kind` of a bearer JWT (`Authorization` header), read without checking it: only to pick the
 * authenticator that checks it on a route that takes either an API key or a user's JWT.
 */
export function bearerTokenKind(header: string | undefined): unknown {
  const payload = bearerToken(header)?.split('.')[1];
  if (!payload || payload.length > 8192) return undefined;
  try {
    return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { kind?: unknown }).kind;
  } catch {
    return undefined;
  }
}
