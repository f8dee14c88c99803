import { createSigner } from 'fast-jwt';
import { Agent, fetch } from 'undici';

/** An application's FCM service account, as the control store keeps it. */
export interface FcmCredentials {
  projectId: string;
  clientEmail: string;
  /** PEM, RSA. */
  privateKey: string;
  privateKeyId?: string;
  tokenUri: string;
}

/** What one push to an Android device (or a web app through FCM) says, and how FCM treats it. */
export interface FcmNotification {
  /** `message.data`: string values only (the app reads them). */
  data: Record<string, string>;
  /** `message.notification`, shown by the system when the app is in the background; absent in private mode. */
  notification?: { title: string; body: string };
  /** Messages with the same key replace each other while undelivered (`android.collapse_key`). */
  collapseKey?: string;
  ttlSeconds: number;
  priority: 'high' | 'normal';
}

/** FCM's answer: 200, or its status and error code (404 `UNREGISTERED`: the token is gone). */
export interface FcmResult {
  status: number;
  errorCode?: string;
}

export const FCM_ORIGIN = 'https://fcm.googleapis.com';
const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';

/**
 * Sends with FCM's HTTP v1 API: an OAuth 2.0 access token per service account, got from its
 * token URI with a signed assertion (RS256: iss its e-mail, the messaging scope, aud the token
 * URI, an hour's validity) and kept until five minutes before it expires, then
 * `POST /v1/projects/{project}/messages:send`. `origin` replaces Google's (the tests' own
 * server); `ca` trusts its certificate.
 */
export class FcmSender {
  private readonly tokens = new Map<string, { token: string; until: number }>();
  private readonly dispatcher: Agent;

  constructor(private readonly o: { origin?: string; ca?: string; timeoutMs?: number; now?: () => number } = {}) {
    this.dispatcher = new Agent({ connections: 8, ...(o.ca ? { connect: { ca: o.ca } } : {}) });
  }

  async send(c: FcmCredentials, deviceToken: string, n: FcmNotification): Promise<FcmResult> {
    const access = await this.accessToken(c);
    if (typeof access !== 'string') return access;
    const message = {
      token: deviceToken,
      data: n.data,
      ...(n.notification ? { notification: n.notification } : {}),
      android: { ttl: `${n.ttlSeconds}s`, priority: n.priority === 'high' ? 'HIGH' : 'NORMAL', ...(n.collapseKey ? { collapse_key: n.collapseKey } : {}) },
    };
    const res = await fetch(`${this.o.origin ?? FCM_ORIGIN}/v1/projects/${encodeURIComponent(c.projectId)}/messages:send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message }),
      dispatcher: this.dispatcher,
      signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000),
    });
    const text = await res.text();
    if (res.status === 200) return { status: 200 };
    if (res.status === 401) this.tokens.delete(c.clientEmail);
    return { status: res.status, ...errorCodeOf(text) };
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  /** The service account's access token: the one kept, or a new one (a failed exchange answers as a send would). */
  private async accessToken(c: FcmCredentials): Promise<string | FcmResult> {
    const now = (this.o.now ?? Date.now)();
    const kept = this.tokens.get(c.clientEmail);
    if (kept && kept.until > now) return kept.token;
    const assertion = createSigner({ key: c.privateKey, algorithm: 'RS256', clockTimestamp: now, expiresIn: 3600_000, ...(c.privateKeyId ? { kid: c.privateKeyId } : {}) })({ iss: c.clientEmail, scope: SCOPE, aud: c.tokenUri });
    const res = await fetch(c.tokenUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
      dispatcher: this.dispatcher,
      signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000),
    });
    const body = (await res.json().catch(() => ({}))) as { access_token?: string; expires_in?: number; error?: string };
    if (res.status !== 200 || typeof body.access_token !== 'string') return { status: res.status === 200 ? 502 : res.status, errorCode: body.error ?? 'TOKEN_EXCHANGE_FAILED' };
    this.tokens.set(c.clientEmail, { token: body.access_token, until: now + Math.max(0, (body.expires_in ?? 3600) - 300) * 1000 });
    return body.access_token;
  }
}

/** FCM's error code (`details[].errorCode`, else `status`) from an error body. */
function errorCodeOf(text: string): { errorCode?: string } {
  try {
    const e = (JSON.parse(text) as { error?: { status?: string; details?: { errorCode?: string }[] } }).error;
    const code = e?.details?.find((d) => d.errorCode)?.errorCode ?? e?.status;
    return code ? { errorCode: code } : {};
  } catch {
    return {};
  }
}
