import { createECDH, randomBytes, randomUUID, type ECDH } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ece from 'http_ece';
import { loopbackCertificate } from '../../test/helpers/loopback-tls.ts';

/**
 * A Web Push service (RFC 8030) as light as this machine allows, for the push benchmark: a real
 * one runs elsewhere, and what it spends here is taken from the node it measures. Node's HTTPS
 * server with keep-alive (a loopback certificate of its own: `caFile`, for the node's
 * NODE_EXTRA_CA_CERTS),
 * answering 201 once the body is in; one push in `decryptEvery` is decrypted with its
 * subscription's keys (RFC 8291), to show the payloads are real, and its message id kept; each
 * subscription's newest push is kept, to be decrypted when asked (`newest`).
 */
export async function startPushSink(decryptEvery: number) {
  const dir = mkdtempSync(join(tmpdir(), 'push-sink-'));
  const tls = loopbackCertificate();
  writeFileSync(join(dir, 'cert.pem'), tls.cert);
  const subscriptions = new Map<string, { ecdh: ECDH; auth: string }>();
  let pushes = 0;
  let decrypted = 0;
  let undecryptable = 0;
  let lastAt = 0;
  const messageIds = new Set<string>();
  /** Each subscription's newest push: its body and when it came. */
  const last = new Map<string, { body: Buffer; at: number; messageId?: string }>();
  const decrypt = (sub: { ecdh: ECDH; auth: string }, body: Buffer) => JSON.parse(ece.decrypt(body, { version: 'aes128gcm', privateKey: sub.ecdh, authSecret: sub.auth }).toString('utf8')) as { messageId?: string };
  const server = createServer({ key: tls.key, cert: tls.cert, keepAliveTimeout: 30_000 }, (req, res) => {
    const id = (req.url ?? '').slice('/push/'.length);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      pushes++;
      lastAt = Date.now();
      const sub = subscriptions.get(id);
      const body = Buffer.concat(chunks);
      if (sub) last.set(id, { body, at: lastAt });
      if (sub && pushes % decryptEvery === 0) {
        try {
          const payload = decrypt(sub, body);
          if (payload.messageId) messageIds.add(payload.messageId);
          decrypted++;
        } catch {
          undecryptable++;
        }
      }
      res.writeHead(sub ? 201 : 404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `https://127.0.0.1:${port}`;
  return {
    caFile: join(dir, 'cert.pem'),
    /** The message id of a subscription's newest push (decrypted once), and when it came. */
    newest(endpoint: string): { messageId?: string; at: number } | undefined {
      const id = endpoint.slice(endpoint.lastIndexOf('/') + 1);
      const got = last.get(id);
      const sub = subscriptions.get(id);
      if (!got || !sub) return undefined;
      if (got.messageId === undefined) {
        try {
          got.messageId = decrypt(sub, got.body).messageId ?? '';
        } catch {
          got.messageId = '';
        }
      }
      return { messageId: got.messageId, at: got.at };
    },
    /** A new subscription, as a browser's PushSubscription.toJSON() gives it. */
    subscribe() {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const id = randomUUID();
      const auth = randomBytes(16).toString('base64url');
      subscriptions.set(id, { ecdh, auth });
      return { endpoint: `${origin}/push/${id}`, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth } };
    },
    get pushes() {
      return pushes;
    },
    get lastAt() {
      return lastAt;
    },
    get decrypted() {
      return decrypted;
    },
    get undecryptable() {
      return undecryptable;
    },
    /** Distinct messages among the pushes decrypted. */
    get distinctDecrypted() {
      return messageIds.size;
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
