import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { build } from 'esbuild';
import { createLogger, loadConfigOrExit } from '../common/index.ts';
import { startDeployment } from '../bin/deployment.ts';
import { attachmentsStoreKind } from '../node/files/index.ts';
import { ChatApiError, ChatServer } from '../sdk/server.ts';
import { ManagementClient } from '../sdk/management.ts';
import { DemoDirectory } from './directory.ts';

const HELP = `Usage: npm run demo

Starts the standalone service (control + node, embedded store) and the reference chat app, a page
built on the SDK's client entry. Open the printed URL in two browser windows, sign in as two names,
and chat. The demo's backend (this process) holds the API key and signs users in, as an
integrator's backend would; the page talks to the chat service directly with the user's token.

Environment: every variable of the service (README, "Configuration"), plus
  DEMO_PORT               port of the page and its backend (default 8082; 0 picks a free port)
  DEMO_WEB_PUSH_SUBJECT   a mailto: or https: contact: turns on Web Push for the demo's
                          application at start, so the page's notifications can be turned on
`;
if (process.argv.includes('--help')) {
  process.stdout.write(HELP);
  process.exit(0);
}

const host = process.env.HOST ?? '127.0.0.1';
const pagePort = await portToUse(Number(process.env.DEMO_PORT ?? 8082));
const pageOrigin = `http://${host}:${pagePort}`;
// The page is served from its own origin and calls the chat service across origins: allow it.
const config = loadConfigOrExit({ ...process.env, CORS_ORIGINS: [process.env.CORS_ORIGINS, pageOrigin].filter(Boolean).join(',') });
const log = createLogger(config.LOG_LEVEL, 'chat-demo');
const deployment = await startDeployment(config, log);
const nodeUrl = deployment.node!.url;
const account = await demoAccount(deployment.control!.url, join(config.DATA_DIR, 'demo.json'));
if (process.env.DEMO_WEB_PUSH_SUBJECT) await turnOnWebPush(deployment.control!.url, account, process.env.DEMO_WEB_PUSH_SUBJECT);
const server = new ChatServer({ baseUrl: nodeUrl, apiKey: account.apiKey });
const directory = new DemoDirectory(server, join(config.DATA_DIR, 'demo-users.json'));
const page = await bundlePage();

/**
 * The page may load only its own script and style, and talk only to the chat service and where
 * attachment files live (the node itself on the embedded store, else the S3 service's public address).
 */
const nodeOrigin = new URL(nodeUrl).origin;
const s3 = attachmentsStoreKind(config) === 's3' ? new URL(config.S3_PUBLIC_ENDPOINT || config.S3_ENDPOINT).origin : '';
const CSP = `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: ${nodeOrigin} ${s3}; connect-src 'self' ${nodeOrigin} ${nodeOrigin.replace(/^http/, 'ws')} ${s3}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/** DEMO_PORT, or a free one for 0: known before the service starts, so CORS can name the page's origin. */
async function portToUse(wanted: number): Promise<number> {
  if (wanted !== 0) return wanted;
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, host, resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * The demo's integrator account (its e-mail and password, to change the application's settings),
 * application and API key: made once, kept beside the data. A file from before the account's
 * login was kept has no e-mail.
 */
interface DemoAccount {
  appId: string;
  apiKey: string;
  email?: string;
  password?: string;
}

async function demoAccount(controlUrl: string, file: string): Promise<DemoAccount> {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as DemoAccount;
  const mgmt = new ManagementClient({ baseUrl: controlUrl });
  const login = { email: `demo-${randomBytes(4).toString('hex')}@example.com`, password: randomBytes(16).toString('hex') };
  await mgmt.register({ companyName: 'Demo', ...login });
  const app = await mgmt.createApplication('Demo chat');
  const account = { appId: app.id, apiKey: (await mgmt.createApiKey(app.id)).token, ...login };
  writeFileSync(file, JSON.stringify(account), { mode: 0o600 });
  return account;
}

/**
 * Web Push for the demo's application, as an integrator sets it (management API, README "Push
 * notifications"): the first set makes its VAPID key pair, later ones (each start) change only
 * the subject, so browsers' subscriptions stay valid. A refused subject stops the demo.
 */
async function turnOnWebPush(controlUrl: string, account: DemoAccount, subject: string): Promise<void> {
  if (!account.email || !account.password) {
    log.warn({ event: 'web-push-skipped' }, 'DEMO_WEB_PUSH_SUBJECT is set, but demo.json in DATA_DIR is from before the demo kept its login: remove it (the demo makes a new account) to turn Web Push on');
    return;
  }
  const mgmt = new ManagementClient({ baseUrl: controlUrl });
  try {
    await mgmt.login({ email: account.email, password: account.password });
    await mgmt.setWebPush(account.appId, subject);
  } catch (error) {
    log.error({ err: String(error) }, `DEMO_WEB_PUSH_SUBJECT: ${error instanceof ChatApiError ? error.problem.detail : String(error)}`);
    await deployment.stop();
    process.exit(1);
  }
}

/**
 * The page (demo/page): Preact and htm, bundled by esbuild at start, as the dashboard is; and its
 * service worker (page/sw.ts), a classic script, served from the page's origin at /sw.js so its
 * scope is the whole app.
 */
async function bundlePage(): Promise<Map<string, { type: string; body: string }>> {
  const options = { bundle: true, platform: 'browser', target: 'es2022', write: false, outdir: 'out', logLevel: 'silent' } as const;
  const [page, worker] = await Promise.all([
    build({ ...options, entryPoints: { app: new URL('./page/main.ts', import.meta.url).pathname }, format: 'esm' }),
    build({ ...options, entryPoints: { sw: new URL('./page/sw.ts', import.meta.url).pathname }, format: 'iife' }),
  ]);
  const files = new Map<string, { type: string; body: string }>();
  files.set('/', { type: 'text/html; charset=utf-8', body: readFileSync(new URL('./page/index.html', import.meta.url), 'utf8') });
  for (const f of [...page.outputFiles, ...worker.outputFiles]) {
    const name = f.path.split('/').at(-1)!;
    if (name.endsWith('.js')) files.set(`/${name}`, { type: 'text/javascript; charset=utf-8', body: f.text });
    if (name.endsWith('.css')) files.set(`/${name}`, { type: 'text/css; charset=utf-8', body: f.text });
  }
  return files;
}

async function readUsername(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 10_000) throw new BadRequest('the request body is over 10,000 characters');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new BadRequest('the request body is not JSON');
  }
  const username = (body as { username?: unknown }).username;
  if (typeof username !== 'string' || !username.trim()) throw new BadRequest('username: required, a non-empty string');
  return username.trim().toLowerCase();
}

class BadRequest extends Error {}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/**
 * The demo's backend routes, as an integrator's backend has them: `GET /demo/users` (the
 * directory), `POST /demo/users {username}` (add a user), `POST /demo/signin {username}` (register
 * if new, then sign in: the session the page hands to `ChatClient.setAuth`, with `baseUrl`).
 */
async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { pathname } = new URL(req.url ?? '/', pageOrigin);
  const file = req.method === 'GET' ? page.get(pathname) : undefined;
  if (file) {
    res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-store', 'content-security-policy': CSP, 'x-content-type-options': 'nosniff' });
    res.end(file.body);
    return;
  }
  if (req.method === 'GET' && pathname === '/demo/users') return reply(res, 200, { users: directory.list() });
  if (req.method === 'POST' && pathname === '/demo/users') return reply(res, 200, await directory.ensure(await readUsername(req)));
  if (req.method === 'POST' && pathname === '/demo/signin') {
    const user = await directory.ensure(await readUsername(req));
    return reply(res, 200, { ...(await server.signIn({ userId: user.userId })), username: user.username, displayName: user.displayName, baseUrl: nodeUrl });
  }
  reply(res, 404, { error: `no route ${req.method} ${pathname}` });
}

const pageServer = createServer((req, res) => {
  route(req, res).catch((error: unknown) => {
    if (error instanceof BadRequest) return reply(res, 400, { error: error.message });
    // The service's own refusal (a name it does not accept, say) is the user's to read.
    if (error instanceof ChatApiError && error.status < 500) return reply(res, 400, { error: error.problem.detail });
    log.warn({ err: String(error) }, 'demo request failed');
    reply(res, 502, { error: 'the chat service did not answer; retry' });
  });
});
// Listening last: the page's port takes connections only once everything behind it answers.
await new Promise<void>((resolve) => pageServer.listen(pagePort, host, resolve));
log.info({ event: 'listening', service: 'demo', port: pagePort, url: pageOrigin }, `demo page on ${pageOrigin}`);

const stop = async () => {
  pageServer.close();
  await deployment.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
