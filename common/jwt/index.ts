export { generateSigningKey, toJwk, fromJwk, type SigningKey, type PublicKey } from './keys.ts';
export { TokenIssuer, TokenVerifier, bearerToken, ALGORITHM, type TokenKind, type TokenClaims, type IssueOptions, type VerifierOptions } from './tokens.ts';
