import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { createSigner } from 'fast-jwt';

/** An application's APNs settings (token authentication), as the control store keeps them. */
export interface ApnsCredentials {
  keyId: string;
  teamId: string;
  /** The .p8 key (PEM, EC P-256). */
  key: string;
  topic: string;
  environment: 'sandbox' | 'production';
}

/** What one push to an Apple device says, and how APNs treats it. */
export interface ApnsNotification {
  /** The JSON body: `aps` and the app's own keys (at most 4 KB). */
  payload: Record<string, unknown>;
  /** Notifications with the same id replace each other on the device (`apns-collapse-id`, at most 64 bytes). */
  collapseId?: string;
  /** Until when APNs keeps trying while the device is away (`apns-expiration`, seconds since the epoch; 0: once). */
  expiration: number;
  /** 10: at once; 5: when the device saves power. */
  priority: 10 | 5;
}

/** APNs' answer: 200, or its status and `reason` (410 `Unregistered`: the token is gone). */
export interface ApnsResult {
  status: number;
  reason?: string;
}

export const APNS_ORIGINS = { production: 'https://api.push.apple.com', sandbox: 'https://api.sandbox.push.apple.com' } as const;
/** A provider token is made again after this long (APNs refuses one older than an hour, and one renewed more often than every 20 minutes). */
const TOKEN_MS = 50 * 60_000;

/**
 * Sends to APNs over HTTP/2 (one session per origin, kept open, as Apple asks), with a provider
 * token per key (an ES256 JWT: `kid` the key id, `iss` the team, `iat`), made again every 50
 * minutes. `origins` replaces Apple's (the tests' own server); `ca` trusts its certificate.
 */
export class ApnsSender {
  private readonly sessions = new Map<string, ClientHttp2Session>();
  private readonly tokens = new Map<string, { jwt: string; until: number }>();

  constructor(private readonly o: { origins?: Partial<Record<ApnsCredentials['environment'], string>>; ca?: string; timeoutMs?: number; now?: () => number } = {}) {}

  /** The provider token of `c`'s key at `nowMs`: the one made within the last 50 minutes, or a new one. */
  token(c: ApnsCredentials, nowMs = (this.o.now ?? Date.now)()): string {
    const id = `${c.teamId}/${c.keyId}`;
    const known = this.tokens.get(id);
    if (known && known.until > nowMs) return known.jwt;
    const jwt = createSigner({ key: c.key, algorithm: 'ES256', kid: c.keyId, clockTimestamp: nowMs })({ iss: c.teamId });
    this.tokens.set(id, { jwt, until: nowMs + TOKEN_MS });
    return jwt;
  }

  async send(c: ApnsCredentials, deviceToken: string, n: ApnsNotification): Promise<ApnsResult> {
    const session = this.session(this.o.origins?.[c.environment] ?? APNS_ORIGINS[c.environment]);
    const headers = {
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: `/3/device/${deviceToken}`,
      authorization: `bearer ${this.token(c)}`,
      'apns-topic': c.topic,
      'apns-push-type': 'alert',
      'apns-priority': String(n.priority),
      'apns-expiration': String(n.expiration),
      ...(n.collapseId ? { 'apns-collapse-id': n.collapseId } : {}),
      'content-type': 'application/json',
    };
    return new Promise<ApnsResult>((resolve, reject) => {
      const req = session.request(headers);
      req.setTimeout(this.o.timeoutMs ?? 10_000, () => req.close(constants.NGHTTP2_CANCEL));
      let status = 0;
      const chunks: Buffer[] = [];
      req.on('response', (h) => (status = Number(h[constants.HTTP2_HEADER_STATUS])));
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('error', reject);
      req.on('close', () => {
        if (status === 0) return reject(new Error('APNs: no answer'));
        let reason: string | undefined;
        try {
          reason = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString()) as { reason?: string }).reason : undefined;
        } catch {
          reason = undefined;
        }
        resolve({ status, ...(reason ? { reason } : {}) });
      });
      req.end(JSON.stringify(n.payload));
    });
  }

  close(): void {
    for (const s of this.sessions.values()) s.close();
    this.sessions.clear();
  }

  private session(origin: string): ClientHttp2Session {
    const open = this.sessions.get(origin);
    if (open && !open.closed && !open.destroyed) return open;
    const session = connect(origin, this.o.ca ? { ca: this.o.ca } : {});
    session.on('error', () => session.destroy());
    session.on('close', () => this.sessions.get(origin) === session && this.sessions.delete(origin));
    this.sessions.set(origin, session);
    return session;
  }
}
