import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { constants, createSecureServer, type Http2SecureServer, type ServerHttp2Stream } from 'node:http2';
import { LoopbackTlsPeer } from './loopback-tls.ts';

/** A notification as the local APNs took it, every check passed. */
export interface ReceivedApns {
  token: string;
  topic: string;
  collapseId: string | undefined;
  priority: string | undefined;
  expiration: string | undefined;
  payload: Record<string, unknown>;
  at: number;
}

/**
 * APNs as Apple runs it, on loopback HTTP/2 over TLS (a certificate of its own: `ca`), for one
 * application's key: it takes `POST /3/device/<token>` only with a provider token (an ES256 JWT
 * whose `kid` is the key id and `iss` the team, issued within the hour) that verifies with that
 * key, and an `apns-topic` of the app's bundle id; else 403 with Apple's reasons. `answer` sets
 * what a push that passed gets (200; 410 `Unregistered` says the token is gone).
 */
export class LocalApns extends LoopbackTlsPeer {
  readonly received: ReceivedApns[] = [];
  readonly refused: { status: number; reason: string }[] = [];
  answer: (token: string) => { status: number; reason?: string } = () => ({ status: 200 });
  protected readonly server: Http2SecureServer;
  private readonly publicKey: KeyObject;

  constructor(private readonly app: { keyId: string; teamId: string; key: string; topic: string }) {
    super();
    this.publicKey = createPublicKey(app.key);
    this.server = createSecureServer(this.tls);
    this.server.on('stream', (stream, headers) => this.take(stream, headers));
  }



  private take(stream: ServerHttp2Stream, headers: Record<string, string | string[] | undefined>): void {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const answer = (status: number, reason?: string) => {
        if (status !== 200) this.refused.push({ status, reason: reason ?? '' });
        stream.respond({ [constants.HTTP2_HEADER_STATUS]: status, 'apns-id': '00000000-0000-0000-0000-000000000001' });
        stream.end(reason ? JSON.stringify({ reason }) : undefined);
      };
      const path = String(headers[constants.HTTP2_HEADER_PATH] ?? '');
      const token = /^\/3\/device\/([0-9a-f]{64,200})$/.exec(path)?.[1];
      if (headers[constants.HTTP2_HEADER_METHOD] !== 'POST' || !token) return answer(400, 'BadPath');
      const bearer = /^bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1];
      if (!bearer) return answer(403, 'MissingProviderToken');
      const [h, p, sig] = bearer.split('.');
      const header = JSON.parse(Buffer.from(h ?? '', 'base64url').toString() || '{}') as { alg?: string; kid?: string };
      const claims = JSON.parse(Buffer.from(p ?? '', 'base64url').toString() || '{}') as { iss?: string; iat?: number };
      const signed = sig !== undefined && verify('sha256', Buffer.from(`${h}.${p}`), { key: this.publicKey, dsaEncoding: 'ieee-p1363' }, Buffer.from(sig, 'base64url'));
      if (header.alg !== 'ES256' || header.kid !== this.app.keyId || claims.iss !== this.app.teamId || !signed) return answer(403, 'InvalidProviderToken');
      if (typeof claims.iat !== 'number' || Math.abs(Date.now() / 1000 - claims.iat) > 3600) return answer(403, 'ExpiredProviderToken');
      if (headers['apns-topic'] !== this.app.topic) return answer(400, 'TopicDisallowed');
      const result = this.answer(token);
      if (result.status === 200) {
        const h1 = (name: string) => (headers[name] === undefined ? undefined : String(headers[name]));
        this.received.push({ token, topic: this.app.topic, collapseId: h1('apns-collapse-id'), priority: h1('apns-priority'), expiration: h1('apns-expiration'), payload: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>, at: Date.now() });
      }
      answer(result.status, result.reason);
    });
  }
}
