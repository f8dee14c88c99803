import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { build } from 'esbuild';
import { createLogger, loadConfigOrExit } from '../../common/index.ts';
import { startDeployment } from '../../bin/deployment.ts';
import { ChatApiError, ChatServer } from '../server.ts';
import { ManagementClient } from '../management.ts';

const HELP = `Usage: npm run demo

Starts the standalone service (control + node, embedded store) and a demo chat page that uses the
SDK's client entry. Open the printed URL in two browser windows, sign in as two names, and chat.
The demo backend holds the API key and signs users in server side, as an integrator's backend would.

Environment: every variable of the service (README, "Configuration"), plus
  DEMO_PORT   port of the demo page and its backend (default 8082; 0 picks a free port)
`;
if (process.argv.includes('--help')) {
  process.stdout.write(HELP);
  process.exit(0);
}

const demoPort = Number(process.env.DEMO_PORT ?? 8082);
const host = process.env.HOST ?? '127.0.0.1';
// The page is served from its own origin; let it call the services. The real port is known after
// listening, so the CORS list allows any origin on the demo's host when DEMO_PORT is 0.
const pageServer = createServer();
await new Promise<void>((resolve) => pageServer.listen(demoPort, host, resolve));
const pagePort = (pageServer.address() as { port: number }).port;
const pageOrigin = `http://${host}:${pagePort}`;
const config = loadConfigOrExit({ ...process.env, CORS_ORIGINS: [process.env.CORS_ORIGINS, pageOrigin].filter(Boolean).join(',') });
const log = createLogger(config.LOG_LEVEL, 'chat-demo');
const deployment = await startDeployment(config, log);
const controlUrl = deployment.control!.url;
const nodeUrl = deployment.node!.url;

/** The demo's integrator account, app and API key, made once and kept beside the data. */
const credentialsFile = join(config.DATA_DIR, 'demo.json');
let apiKey: string;
if (existsSync(credentialsFile)) {
  apiKey = (JSON.parse(readFileSync(credentialsFile, 'utf8')) as { apiKey: string }).apiKey;
} else {
  const mgmt = new ManagementClient({ baseUrl: controlUrl });
  await mgmt.register({ companyName: 'Demo', email: `demo-${randomBytes(4).toString('hex')}@example.com`, password: randomBytes(16).toString('hex') });
  const app = await mgmt.createApplication('Demo chat');
  apiKey = (await mgmt.createApiKey(app.id)).token;
  writeFileSync(credentialsFile, JSON.stringify({ appId: app.id, apiKey }), { mode: 0o600 });
}
const server = new ChatServer({ baseUrl: nodeUrl, apiKey });

const bundle = await build({ entryPoints: [new URL('./app.ts', import.meta.url).pathname], bundle: true, format: 'esm', platform: 'browser', write: false, target: 'es2022' });
const appJs = bundle.outputFiles[0]!.text;
const indexHtml = readFileSync(new URL('./index.html', import.meta.url), 'utf8');

/** Registers the name if new; either way returns its user id. */
async function userIdOf(username: string): Promise<string> {
  try {
    return (await server.registerUser({ username })).userId;
  } catch (error) {
    if (error instanceof ChatApiError && error.code === 'USERNAME_TAKEN') return (await server.signIn({ username })).userId;
    throw error;
  }
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 10_000) throw new Error('too large');
  }
  return JSON.parse(text) as Record<string, unknown>;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}

pageServer.on('request', (req, res) => {
  void (async () => {
    try {
      const url = new URL(req.url ?? '/', pageOrigin);
      if (req.method === 'GET' && url.pathname === '/') return send(res, 200, 'text/html; charset=utf-8', indexHtml);
      if (req.method === 'GET' && url.pathname === '/app.js') return send(res, 200, 'text/javascript; charset=utf-8', appJs);
      if (req.method === 'POST' && (url.pathname === '/demo/signin' || url.pathname === '/demo/user')) {
        const username = String((await readJson(req)).username ?? '').trim().toLowerCase().replace(/[^a-z0-9._@-]/g, '-').slice(0, 64);
        if (!username) return send(res, 400, 'application/json', JSON.stringify({ error: 'username required' }));
        const userId = await userIdOf(username);
        if (url.pathname === '/demo/user') return send(res, 200, 'application/json', JSON.stringify({ userId }));
        return send(res, 200, 'application/json', JSON.stringify({ ...(await server.signIn({ userId })), baseUrl: nodeUrl }));
      }
      send(res, 404, 'text/plain', 'not found');
    } catch (error) {
      log.warn({ err: String(error) }, 'demo request failed');
      send(res, 502, 'application/json', JSON.stringify({ error: 'the chat service did not answer; retry' }));
    }
  })();
});

log.info({ event: 'listening', service: 'demo', port: pagePort, url: pageOrigin }, `demo page on ${pageOrigin}`);
const stop = async () => {
  pageServer.close();
  await deployment.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
