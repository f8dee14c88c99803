import { createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';

/** An Ed25519 signing key. The private half never leaves the service that owns it. */
export interface SigningKey {
  kid: string;
  privateKeyPem: string;
  publicKeyPem: string;
  createdAt: string;
}

export interface PublicKey {
  kid: string;
  publicKeyPem: string;
}

export function generateSigningKey(now: Date = new Date()): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    kid: randomUUID(),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    createdAt: now.toISOString(),
  };
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
