import { createECDH, createPublicKey, randomBytes, randomUUID, verify, type ECDH } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import ece from 'http_ece';
import { LoopbackTlsPeer } from './loopback-tls.ts';

/** A push as the local push service took it: checked and decrypted. */
export interface ReceivedPush {
  subscriptionId: string;
  /** The payload, decrypted with the subscription's keys (RFC 8291). */
  payload: string;
  ttl: number;
  urgency: string | undefined;
  topic: string | undefined;
  /** The VAPID JWT's claims, its signature verified with `publicKey`. */
  claims: { aud: string; exp: number; sub: string };
  /** The VAPID public key the request named (`k=`). */
  publicKey: string;
  at: number;
}

/** A subscription as a browser makes it (PushSubscription.toJSON()), and its private half. */
export interface BrowserSubscription {
  id: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
  ecdh: ECDH;
}

/** The ES256 signature of a JWT, checked with a raw P-256 point (base64url); its claims, or why not. */
function verifiedClaims(jwt: string, publicKey: string): { aud: string; exp: number; sub: string } | string {
  const parts = jwt.split('.');
  if (parts.length !== 3) return 'not a JWT';
  const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString()) as { alg?: string; typ?: string };
  if (header.alg !== 'ES256') return `alg ${header.alg}, not ES256`;
  const point = Buffer.from(publicKey, 'base64url');
  if (point.length !== 65 || point[0] !== 4) return 'k is not an uncompressed P-256 point';
  const key = createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') }, format: 'jwk' });
  const ok = verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(parts[2]!, 'base64url'));
  if (!ok) return 'the signature does not verify with k';
  return JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()) as { aud: string; exp: number; sub: string };
}

/**
 * A push service of RFC 8030 on loopback HTTPS (a certificate of its own: `ca`), as browsers'
 * vendors run them: it takes a push only with a VAPID JWT (RFC 8292) that verifies with the key
 * it names, whose `aud` is its own origin and whose `exp` is within 24 hours, and decrypts the
 * payload with the subscription's private key (RFC 8291, aes128gcm): what it cannot check it
 * refuses (401/403/400), as a real one would. `answer` sets the status of the next pushes (201).
 */
export class LocalPushService extends LoopbackTlsPeer {
  readonly received: ReceivedPush[] = [];
  readonly refused: { subscriptionId: string; status: number; reason: string }[] = [];
  /** The status answered to a push that passed every check (201 Created by default; 410 says the subscription is gone). */
  answer: (subscriptionId: string) => number = () => 201;
  private readonly subscriptions = new Map<string, BrowserSubscription>();
  protected readonly server: Server;

  constructor() {
    super();
    this.server = createServer(this.tls, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const id = (req.url ?? '').split('/').at(-1) ?? '';
        const refuse = (status: number, reason: string) => {
          this.refused.push({ subscriptionId: id, status, reason });
          res.writeHead(status).end(reason);
        };
        const sub = this.subscriptions.get(id);
        if (req.method !== 'POST' || !sub) return refuse(404, 'no such subscription');
        const auth = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(String(req.headers.authorization ?? ''));
        if (!auth) return refuse(401, 'no VAPID authorization');
        const claims = verifiedClaims(auth[1]!, auth[2]!);
        if (typeof claims === 'string') return refuse(403, claims);
        const now = Math.floor(Date.now() / 1000);
        if (claims.aud !== this.origin) return refuse(403, `aud ${claims.aud} is not ${this.origin}`);
        if (!(claims.exp > now && claims.exp <= now + 24 * 3600)) return refuse(403, 'exp is not within 24 hours');
        if (!/^(mailto:|https:)/.test(claims.sub ?? '')) return refuse(403, 'sub is not mailto: or https:');
        if (req.headers['content-encoding'] !== 'aes128gcm') return refuse(400, 'not aes128gcm');
        const ttl = Number(req.headers.ttl);
        if (!Number.isInteger(ttl) || ttl < 0) return refuse(400, 'no TTL');
        let payload: string;
        try {
          payload = ece.decrypt(Buffer.concat(chunks), { version: 'aes128gcm', privateKey: sub.ecdh, authSecret: sub.keys.auth }).toString('utf8');
        } catch (error) {
          return refuse(400, `cannot decrypt: ${String(error)}`);
        }
        const status = this.answer(id);
        if (status < 300) {
          const topic = req.headers.topic === undefined ? undefined : String(req.headers.topic);
          const urgency = req.headers.urgency === undefined ? undefined : String(req.headers.urgency);
          this.received.push({ subscriptionId: id, payload, ttl, urgency, topic, claims, publicKey: auth[2]!, at: Date.now() });
        }
        res.writeHead(status).end();
      });
    });
  }


  /** A new browser subscription to this service: its endpoint and keys, as PushSubscription.toJSON() gives them. */
  subscribe(): BrowserSubscription {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const id = randomUUID();
    const sub = { id, endpoint: `${this.origin}/push/${id}`, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: randomBytes(16).toString('base64url') }, ecdh };
    this.subscriptions.set(id, sub);
    return sub;
  }

  /** Resolves once `check` holds of what was received (polled), or rejects after `ms`. */
  async until(check: (received: ReceivedPush[]) => boolean, ms = 5000): Promise<void> {
    const end = Date.now() + ms;
    while (!check(this.received)) {
      if (Date.now() > end) throw new Error(`the push service did not see it in ${ms} ms (received ${this.received.length}, refused ${JSON.stringify(this.refused)})`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

}
