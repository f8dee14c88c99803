import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { hashSecret } from './secrets.ts';

/** RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30 s steps. */
const PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
/** Codes of the step before and after the current one are accepted too (clock drift). */
const WINDOW = 1;
export const ISSUER = 'Chat service';
export const RECOVERY_CODES = 10;

const totp = (secret: string, label = '') => new TOTP({ ...PARAMS, issuer: ISSUER, label, secret: Secret.fromBase32(secret) });

/** A new secret (160 bits, as RFC 4226 recommends) with what an authenticator app needs to enrol it. */
export async function newEnrolment(email: string): Promise<{ secret: string; otpauthUri: string; qrSvg: string }> {
  const secret = new Secret({ size: 20 }).base32;
  const otpauthUri = totp(secret, email).toString();
  return { secret, otpauthUri, qrSvg: await QRCode.toString(otpauthUri, { type: 'svg', margin: 1 }) };
}

/**
 * The time step `code` is valid for at `nowMs` (within one step either side), or undefined. A
 * six-digit string is checked in constant time by the library; anything else is refused first.
 */
export function stepOf(secret: string, code: string, nowMs: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const t = totp(secret);
  const delta = t.validate({ token: code, timestamp: nowMs, window: WINDOW });
  return delta === null ? undefined : t.counter({ timestamp: nowMs }) + delta;
}

/** The code of `secret` at `nowMs`: for tests and tools that stand in for an authenticator app. */
export const codeAt = (secret: string, nowMs: number): string => totp(secret).generate({ timestamp: nowMs });

/** Ten single-use recovery codes, 50 random bits each, shown as `xxxxx-xxxxx` (lower-case base32). */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODES }, () => {
    const raw = new Secret({ buffer: randomBytes(7).buffer as ArrayBuffer }).base32.toLowerCase().slice(0, 10);
    return `${raw.slice(0, 5)}-${raw.slice(5)}`;
  });
}

/** A recovery code as typed (any case, with or without the dash or spaces) to its stored hash. */
export function recoveryHash(code: string): string | undefined {
  const plain = code.toLowerCase().replace(/[\s-]/g, '');
  return /^[a-z2-7]{10}$/.test(plain) ? hashSecret(`recovery:${plain}`) : undefined;
}
