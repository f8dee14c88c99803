import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Signing per the Standard Webhooks specification, with its reference library: secrets are
 * `whsec_` and 32 random bytes in base64; a delivery carries `webhook-id`, `webhook-timestamp`
 * (Unix seconds) and `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of
 * `id.timestamp.body`), which any Standard Webhooks library verifies.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function signatureHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}
