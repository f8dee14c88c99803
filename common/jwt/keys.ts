import { createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';

/**
 * An Ed25519 signing key. The private half never leaves the service that owns it (and its store).
 * Its life (see KeyRing): stored at `createdAt`, from then on it verifies; it signs from
 * `activeFrom` until a newer key's `activeFrom`; it stops verifying expiring tokens at `retiresAt`.
 */
export interface SigningKey {
  kid: string;
  privateKeyPem: string;
  publicKeyPem: string;
  createdAt: string;
  /** When it starts signing (ISO 8601); absent: at `createdAt` (a first key). */
  activeFrom?: string;
  /** When tokens it signed stop verifying (ISO 8601), set by the rotation that replaces it; absent: never. */
  retiresAt?: string;
}

export interface PublicKey {
  kid: string;
  publicKeyPem: string;
  /** When tokens it signed stop verifying (ISO 8601); absent: never. */
  retiresAt?: string;
}

/** A new key, stored at `now`, that signs from `activeFrom` (default: at once). */
export function generateSigningKey(now: Date = new Date(), activeFrom?: Date): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    kid: randomUUID(),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    createdAt: now.toISOString(),
    ...(activeFrom ? { activeFrom: activeFrom.toISOString() } : {}),
  };
}

/** The public half and retirement of a key: what a verifier needs, and nothing private. */
export function publicKeyOf(key: SigningKey): PublicKey {
  return { kid: key.kid, publicKeyPem: key.publicKeyPem, ...(key.retiresAt ? { retiresAt: key.retiresAt } : {}) };
}

/** RFC 7517 JWK of a public key, for `/.well-known/jwks.json`. */
export function toJwk(key: PublicKey): Record<string, unknown> {
  const jwk = createPublicKey(key.publicKeyPem).export({ format: 'jwk' });
  return { ...jwk, kid: key.kid, alg: 'EdDSA', use: 'sig' };
}

export function fromJwk(jwk: Record<string, unknown>): PublicKey | undefined {
  if (typeof jwk.kid !== 'string' || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') return undefined;
  const pem = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
  return { kid: jwk.kid, publicKeyPem: pem };
}
