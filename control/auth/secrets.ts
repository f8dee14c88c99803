import { createHash, randomBytes } from 'node:crypto';

/** Stored form of a bearer secret (refresh token, API key): its SHA-256, hex. */
export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** Opaque refresh token: 256 random bits. Not a JWT, so it can never pass for one. */
export const newRefreshToken = (): string => `rt_${randomBytes(32).toString('base64url')}`;
