export { generateSigningKey, publicKeyOf, toJwk, fromJwk, type SigningKey, type PublicKey } from './keys.ts';
export { KeyRing, KeyRotationConflict, loadKeyRing, rotatedKeys, watchKeyRing, type SigningKeyStore } from './key-ring.ts';
export { MemorySigningKeys } from './memory-key-store.ts';
export { TokenIssuer, TokenVerifier, bearerToken, bearerTokenKind, ALGORITHM, type TokenKind, type TokenClaims, type IssueOptions, type VerifierOptions } from './tokens.ts';
