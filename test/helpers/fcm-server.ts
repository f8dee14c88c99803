import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { LoopbackTlsPeer } from './loopback-tls.ts';

/** A message as the local FCM took it. */
export interface ReceivedFcm {
  projectId: string;
  message: { token: string; data?: Record<string, string>; notification?: { title: string; body: string }; android?: { collapse_key?: string; ttl?: string; priority?: string } };
  at: number;
}

/**
 * FCM's HTTP v1 API and Google's token endpoint, on loopback HTTPS (a certificate of its own:
 * `ca`), for one service account: `POST /token` gives an access token only for an assertion
 * signed with the account's key (RS256; iss its e-mail, aud this token URI, the messaging scope,
 * an hour at most); `POST /v1/projects/{id}/messages:send` takes a message only with a token it
 * gave, for the account's project. `answer` sets what a message that passed gets (200; 404
 * UNREGISTERED says the token is gone; 503 asks to try later).
 */
export class LocalFcm extends LoopbackTlsPeer {
  readonly received: ReceivedFcm[] = [];
  readonly refused: { status: number; reason: string }[] = [];
  answer: (token: string) => number = () => 200;
  /** Access tokens given, and the number of exchanges. */
  exchanges = 0;
  private readonly issued = new Set<string>();
  private readonly publicKey: KeyObject;
  protected readonly server: Server;

  constructor(private readonly account: { projectId: string; clientEmail: string; privateKey: string }) {
    super();
    this.publicKey = createPublicKey(account.privateKey);
    this.server = createServer(this.tls, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        const reply = (status: number, json: unknown, reason = '') => {
          if (status !== 200) this.refused.push({ status, reason });
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
        };
        if (req.method === 'POST' && req.url === '/token') {
          const form = new URLSearchParams(body);
          const problem = form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer' ? this.assertionProblem(form.get('assertion') ?? '') : 'grant_type';
          if (problem) return reply(400, { error: 'invalid_grant', error_description: problem }, problem);
          const token = randomBytes(24).toString('base64url');
          this.issued.add(token);
          this.exchanges++;
          return reply(200, { access_token: token, expires_in: 3599, token_type: 'Bearer' });
        }
        const project = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(req.url ?? '')?.[1];
        if (req.method !== 'POST' || !project) return reply(404, { error: { status: 'NOT_FOUND' } }, 'route');
        const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
        if (!bearer || !this.issued.has(bearer)) return reply(401, { error: { status: 'UNAUTHENTICATED' } }, 'access token');
        if (project !== this.account.projectId) return reply(403, { error: { status: 'PERMISSION_DENIED' } }, 'project');
        const { message } = JSON.parse(body) as { message: ReceivedFcm['message'] };
        const status = this.answer(message.token);
        if (status === 404) return reply(404, { error: { status: 'NOT_FOUND', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }] } }, 'unregistered');
        if (status !== 200) return reply(status, { error: { status: 'UNAVAILABLE' } }, 'unavailable');
        this.received.push({ projectId: project, message, at: Date.now() });
        return reply(200, { name: `projects/${project}/messages/${randomBytes(6).toString('hex')}` });
      });
    });
  }



  /** Why an assertion is refused, or undefined. */
  private assertionProblem(jwt: string): string | undefined {
    const [h, p, sig] = jwt.split('.');
    if (!h || !p || !sig) return 'not a JWT';
    const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: string };
    if (header.alg !== 'RS256') return 'alg';
    if (!verify('sha256', Buffer.from(`${h}.${p}`), this.publicKey, Buffer.from(sig, 'base64url'))) return 'signature';
    const c = JSON.parse(Buffer.from(p, 'base64url').toString()) as { iss?: string; aud?: string; scope?: string; iat?: number; exp?: number };
    if (c.iss !== this.account.clientEmail) return 'iss';
    if (c.aud !== `${this.origin}/token`) return 'aud';
    if (c.scope !== 'https://www.googleapis.com/auth/firebase.messaging') return 'scope';
    if (typeof c.iat !== 'number' || typeof c.exp !== 'number' || c.exp - c.iat > 3600 || c.exp < Date.now() / 1000) return 'iat/exp';
    return undefined;
  }
}
