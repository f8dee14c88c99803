import { createHmac, randomBytes } from 'node:crypto';

/**
 * Signing per the Standard Webhooks specification: secrets are `whsec_` and 32 random bytes in
 * base64; a delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature` (`v1,` and the base64 HMAC-SHA256, keyed with the secret's bytes, of
 * `id.timestamp.body`), which any Standard Webhooks library verifies. The HMAC is node:crypto's:
 * the reference library (`standardwebhooks`, a pure-JS SHA-256) took 16 µs a signature against
 * 3 µs here, and every message makes one. Tests verify every delivery with that library.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Secrets' key bytes, decoded once (an endpoint signs every event with the same secret); bounded. */
const keys = new Map<string, Buffer>();

function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= 1000) keys.clear();
    key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
    keys.set(secret, key);
  }
  return key;
}

export function signatureHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  return {
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.`).update(body).digest('base64')}`,
  };
}
