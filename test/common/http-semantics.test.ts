import { connect, type Socket } from 'node:net';
import t, { type Test } from 'tap';
import { client, integration, removeDir, startService } from '../helpers/index.ts';
import { assertProblem } from '../helpers/problem.ts';

/*
 * HTTP semantics both services share (common/http/server.ts, RFC 9110), checked on real TCP
 * connections: fetch cannot send TRACE or CONNECT, and hides what a kept-alive connection carries.
 */

interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: Buffer;
}

/** One kept-alive connection: raw requests out, responses read back as a client reads them. */
class Raw {
  private buf = Buffer.alloc(0);
  private ended = false;
  private wake: (() => void) | undefined;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buf = Buffer.concat([this.buf, chunk]);
      this.wake?.();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake?.();
    });
    socket.on('error', () => {});
  }

  static open(url: string): Promise<Raw> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) }, () => resolve(new Raw(socket)));
      socket.once('error', reject);
    });
  }

  send(data: string | Buffer): void {
    this.socket.write(data);
  }

  close(): void {
    this.socket.destroy();
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Bytes received and not yet read as a response. */
  get unread(): string {
    return this.buf.toString('latin1');
  }

  /** Resolves once `ready()` holds or the connection is closed; rejects after `ms`. */
  async waitFor(ready: () => boolean, ms: number): Promise<void> {
    const deadline = performance.now() + ms;
    while (!ready() && !this.ended) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`nothing within ${ms} ms; unread: ${JSON.stringify(this.unread.slice(0, 200))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** The next response. `head`: it answers a HEAD request, so it has no content whatever its Content-Length. */
  async response(head = false, ms = 5000): Promise<RawResponse> {
    await this.waitFor(() => this.buf.includes('\r\n\r\n'), ms);
    const end = this.buf.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`connection closed without a response; unread: ${JSON.stringify(this.unread)}`);
    const [statusLine = '', ...lines] = this.buf.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]);
    const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as const));
    const length = head || status === 204 || status === 304 ? 0 : Number(headers.get('content-length') ?? 0);
    await this.waitFor(() => this.buf.length >= end + 4 + length, ms);
    const body = this.buf.subarray(end + 4, end + 4 + length);
    this.buf = this.buf.subarray(end + 4 + length);
    return { status, headers, body };
  }
}

const request = (method: string, path: string, headers: Record<string, string> = {}, body = ''): string =>
  `${method} ${path} HTTP/1.1\r\nhost: test\r\n` +
  Object.entries({ ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('') +
  `\r\n${body}`;

function assertRawProblem(t: Test, res: RawResponse, status: number, code: string, label: string): void {
  const text = res.body.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  assertProblem(t, { status: res.status, headers: new Headers([...res.headers]), body, text }, status, code, label);
}

const svc = await startService();
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});
const it = await integration(svc);
const user = await it.user();
const services = { control: svc.controlUrl, node: svc.nodeUrl };
/** A path with two methods on each service, and the `Allow` it must carry. */
const known = {
  control: { path: '/api/client/profile', token: it.accessToken, allow: 'GET, HEAD, PUT, OPTIONS', others: ['POST', 'PATCH', 'DELETE'] },
  node: { path: '/api/chats', token: user.jwt, allow: 'GET, HEAD, POST, OPTIONS', others: ['PUT', 'PATCH', 'DELETE'] },
};

t.test('TRACE, CONNECT and any method a known path does not serve: 405 with Allow naming its methods', async (t) => {
  for (const [name, url] of Object.entries(services)) {
    const { path, token, allow, others } = known[name as keyof typeof known];
    const conn = await Raw.open(url);
    t.teardown(() => conn.close());
    for (const method of ['TRACE', 'CONNECT', ...others]) {
      conn.send(request(method, path, { authorization: `Bearer ${token}` }));
      const res = await conn.response();
      assertRawProblem(t, res, 405, 'METHOD_NOT_ALLOWED', `${name}: ${method} ${path}`);
      t.equal(res.headers.get('allow'), allow, `${name}: ${method} ${path}: Allow`);
    }
    conn.send(request('TRACE', '/api/nothing-here'));
    const unknown = await conn.response();
    assertRawProblem(t, unknown, 404, 'ROUTE_NOT_FOUND', `${name}: TRACE on an unknown path`);
    t.equal(unknown.headers.get('allow'), undefined, `${name}: a 404 has no Allow`);
  }
  // Through fetch as well: a wrong method, as a browser or SDK sends it.
  const wrong = await client(svc.controlUrl).call('PATCH', '/api/client/profile', { token: it.accessToken });
  t.equal(wrong.headers.get('allow'), known.control.allow);
});

t.test('OPTIONS on a known path: 204 with Allow, no Content-Length, and the connection stays in step', async (t) => {
  for (const [name, url] of Object.entries(services)) {
    const { path, allow } = known[name as keyof typeof known];
    const conn = await Raw.open(url);
    t.teardown(() => conn.close());
    conn.send(request('OPTIONS', path));
    const res = await conn.response();
    t.equal(res.status, 204, `${name}: OPTIONS ${path}`);
    t.equal(res.headers.get('allow'), allow, `${name}: Allow`);
    t.equal(res.headers.get('access-control-allow-headers'), 'authorization, content-type, idempotency-key', `${name}: exactly the request headers some route reads (no x-api-key: keys go in Authorization)`);
    t.equal(res.headers.get('content-length'), undefined, `${name}: a 204 has no Content-Length (RFC 9110 §8.6)`);
    conn.send(request('GET', '/healthz'));
    const next = await conn.response();
    t.equal(next.status, 200, `${name}: the next response on the connection`);
    t.same(JSON.parse(next.body.toString()), { status: 'ok' });
    t.equal(conn.unread, '', `${name}: nothing left over`);
    conn.send(request('OPTIONS', '/api/nothing-here'));
    assertRawProblem(t, await conn.response(), 404, 'ROUTE_NOT_FOUND', `${name}: OPTIONS on an unknown path`);
  }
});

t.test('HEAD on every GET route answers what GET answers, without content, and the next response is intact', async (t) => {
  const dummy = '00000000-0000-4000-8000-000000000000';
  const tokens: Record<string, string> = { accessToken: it.accessToken, apiKey: it.apiKey, userJwt: user.jwt };
  for (const [name, url] of Object.entries(services)) {
    const doc = (await client(url).get('/openapi.json')).body as { paths: Record<string, Record<string, { security?: Record<string, unknown>[] }>> };
    const conn = await Raw.open(url);
    t.teardown(() => conn.close());
    let routes = 0;
    for (const [template, operations] of Object.entries(doc.paths)) {
      const get = operations.get;
      if (!get) continue;
      routes++;
      const path = template.replace('{appId}', it.appId).replace('{userId}', user.userId).replace(/\{[^}]+\}/g, dummy);
      const scheme = Object.keys(get.security?.[0] ?? {})[0];
      const headers: Record<string, string> = scheme ? { authorization: `Bearer ${tokens[scheme]}` } : {};
      conn.send(request('GET', path, headers));
      const full = await conn.response();
      conn.send(request('HEAD', path, headers));
      const head = await conn.response(true);
      const label = `${name}: HEAD ${path}`;
      t.equal(head.status, full.status, `${label}: the status of GET (${full.status})`);
      for (const header of ['content-type', 'cache-control', 'retry-after']) t.equal(head.headers.get(header), full.headers.get(header), `${label}: ${header} of GET`);
      // The exposition counts the GET just answered, so its length moves between the two.
      if (template !== '/metrics') t.equal(head.headers.get('content-length'), String(full.body.length), `${label}: the Content-Length of GET`);
      t.equal(conn.unread, '', `${label}: no content follows`);
    }
    t.ok(routes >= 4, `${name}: checked ${routes} GET routes`);
    // HEAD where there is no GET: the refusal, without its problem body.
    conn.send(request('HEAD', '/api/nothing-here'));
    const missing = await conn.response(true);
    t.equal(missing.status, 404, `${name}: HEAD on an unknown path`);
    t.equal(conn.unread, '', `${name}: the 404 to HEAD has no content`);
    conn.send(request('GET', '/healthz'));
    const last = await conn.response();
    t.equal(last.status, 200, `${name}: a GET after all these HEADs`);
    t.same(JSON.parse(last.body.toString()), { status: 'ok' });
  }
  const postOnly = await Raw.open(svc.controlUrl);
  t.teardown(() => postOnly.close());
  postOnly.send(request('HEAD', '/api/auth/login'));
  const refused = await postOnly.response(true);
  t.equal(refused.status, 405, 'HEAD on a POST-only path');
  t.equal(refused.headers.get('allow'), 'POST, OPTIONS');
  t.equal(postOnly.unread, '', 'the 405 to HEAD has no content');
});

t.test('the HTTP layer refuses what the OpenAPI documents say it refuses: 413 on any route, 415 on body routes', async (t) => {
  for (const [name, url] of Object.entries(services)) {
    const conn = await Raw.open(url);
    t.teardown(() => conn.close());
    // Declared too large: refused before a byte of it is read.
    conn.send(`GET /healthz HTTP/1.1\r\nhost: test\r\ncontent-length: ${64 * 1024 + 1}\r\n\r\n`);
    assertRawProblem(t, await conn.response(), 413, 'PAYLOAD_TOO_LARGE', `${name}: GET /healthz with a body over MAX_BODY_BYTES`);
  }
  const login = await client(svc.controlUrl).call('POST', '/api/auth/login', { raw: 'email=a', headers: { 'content-type': 'text/plain' } });
  t.equal(login.status, 415, 'a body route refuses text/plain');
});

t.test('the OpenAPI documents list every status each route answers, the Idempotency-Key header, and the bound port', async (t) => {
  const inProcess = new Set(['/healthz', '/metrics', '/openapi.json']);
  for (const [name, url] of Object.entries(services)) {
    const doc = (await client(url).get('/openapi.json')).body;
    t.equal(doc.servers[0].url, url, `${name}: servers names the port bound, not :0`);
    t.match(doc.info.description, /405 METHOD_NOT_ALLOWED with an `Allow` header/, `${name}: the 405 rule is stated`);
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, { requestBody?: unknown; security: Record<string, unknown>[]; responses: Record<string, { headers?: Record<string, unknown> }> }>>)) {
      for (const [method, op] of Object.entries(operations)) {
        const label = `${name}: ${method.toUpperCase()} ${path}`;
        const statuses = Object.keys(op.responses);
        t.ok(statuses.includes('413'), `${label}: 413`);
        t.ok(statuses.includes('500'), `${label}: 500`);
        if (op.requestBody) t.ok(statuses.includes('415'), `${label}: 415`);
        t.equal(statuses.includes('503'), !inProcess.has(path), `${label}: 503 ${inProcess.has(path) ? 'not ' : ''}listed`);
        if (op.security[0]?.userJwt) t.ok(statuses.includes('429'), `${label}: 429 (requests per user are counted)`);
        if (op.responses['429']) t.ok(op.responses['429'].headers?.['Retry-After'], `${label}: 429 declares Retry-After`);
      }
    }
    if (name === 'control') {
      for (const path of ['/api/auth/register', '/api/auth/login']) t.ok(doc.paths[path].post.responses['429'], `control: POST ${path}: 429`);
    } else {
      const send = doc.paths['/api/messages/{chatId}'].post as { parameters: { name: string; in: string }[] };
      const header = send.parameters.find((p) => p.in === 'header' && p.name === 'Idempotency-Key');
      t.match(header, { required: false, schema: { type: 'string', minLength: 1, maxLength: 64 } }, 'node: sendMessage declares the Idempotency-Key header');
    }
  }
});

/*
 * Two defects sit inside the uWS build package.json pins (@rjweb/uws 1.5.0: uWS v20.4x binaries),
 * before any JavaScript runs, so nothing here can fix them (README, HTTP rules): a method outside
 * GET, POST, HEAD, PUT, DELETE, CONNECT, OPTIONS, TRACE and PATCH gets the connection closed
 * unanswered (uWS v20.50 hands every method over, and attachRoutes would answer it 405 or 404), and a
 * control byte such as NUL in a header holds the connection to uWS's 10 s idle timeout (uWS v20.69
 * answers 400). What this build does guarantee is checked: such a method never holds a connection.
 */
t.test('uWS closes the connection of a method outside the nine at once: it is never held', async (t) => {
  for (const [name, url] of Object.entries(services)) {
    const conn = await Raw.open(url);
    t.teardown(() => conn.close());
    const started = performance.now();
    conn.send(request('QUERY', '/healthz'));
    await conn.waitFor(() => false, 2000).catch(() => undefined);
    t.ok(conn.closed, `${name}: closed after ${Math.round(performance.now() - started)} ms`);
  }
});
