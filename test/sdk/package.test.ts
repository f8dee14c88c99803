import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { integration, removeDir, startService } from '../helpers/index.ts';

// The SDK as a package (README, "The SDK"): `npm run pack:sdk` makes a tarball that a fresh
// project installs (with `ws` beside it, for realtime in Node 20), and the README's backend
// example runs from it verbatim, type-checked against the package's declarations; a ChatClient
// then chats over it. Without `ws`, realtime fails with a message that says what to install.
const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const TSX = join(ROOT, 'node_modules/tsx/dist/loader.mjs');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

/** The README's first TypeScript block after `marker`. */
function readmeBlock(marker: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf(marker);
  const start = readme.indexOf('```ts\n', from) + '```ts\n'.length;
  return readme.slice(start, readme.indexOf('```', start));
}

const svc = await startService();
const dir = mkdtempSync(join(tmpdir(), 'chat-sdk-package-'));
t.teardown(async () => {
  await svc.stop();
  removeDir(dir);
});

t.test('the packed SDK installs in a fresh project and runs the README’s examples', async (t) => {
  const packed = JSON.parse((await run('npm', ['pack', join(ROOT, 'sdk'), '--pack-destination', dir, '--json'], { cwd: ROOT })).stdout) as { filename: string; files: { path: string }[] }[];
  const tarball = join(dir, packed[0]!.filename);
  const [root, sdk] = ['package.json', 'sdk/package.json'].map((f) => JSON.parse(readFileSync(join(ROOT, f), 'utf8')) as { dependencies: Record<string, string> });
  t.equal(sdk!.dependencies.msgpackr, root!.dependencies.msgpackr, 'the SDK depends on the msgpackr the service is built and tested with');
  t.ok(packed[0]!.files.some((f) => f.path === 'dist/server.js') && packed[0]!.files.some((f) => f.path === 'dist/client.d.ts'), 'the tarball holds the built entries and their types');
  t.notOk(packed[0]!.files.some((f) => f.path.endsWith('.ts') && !f.path.endsWith('.d.ts')), 'and no sources');

  const app = join(dir, 'fresh-app');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true, type: 'module' }));
  await run('npm', ['install', tarball, 'ws@^8', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: app, timeout: 180_000 });

  // The backend example, verbatim, then a caller.
  writeFileSync(join(app, 'backend.ts'), readmeBlock('Your backend signs a user in and hands the result to the browser'));
  writeFileSync(join(app, 'main.ts'), "import { chatSessionFor } from './backend.ts';\nconsole.log(JSON.stringify(await chatSessionFor('fresh-user')));\n");
  const types = await run(process.execPath, [TSC, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--allowImportingTsExtensions', '--typeRoots', join(ROOT, 'node_modules/@types'), '--types', 'node', 'backend.ts', 'main.ts'], { cwd: app }).then(
    () => 'ok',
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
  t.equal(types, 'ok', 'the example type-checks against the package’s declarations');
  const it = await integration(svc, 'sdk-package');
  const env = { ...process.env, CHAT_ENDPOINT: svc.nodeUrl, CHAT_API_KEY: it.apiKey };
  const first = JSON.parse((await run(process.execPath, ['--import', TSX, 'main.ts'], { cwd: app, env })).stdout) as Record<string, unknown>;
  t.match(first, { jwt: String, refreshToken: String, userId: String, expiresIn: Number }, 'the README’s chatSessionFor signs a new user in');
  const again = JSON.parse((await run(process.execPath, ['--import', TSX, 'main.ts'], { cwd: app, env })).stdout) as Record<string, unknown>;
  t.equal(again.userId, first.userId, 'and the same user again (registerUser answers 409, signIn by username)');

  // A ChatClient in Node, with ws, from the package: chats with a second user.
  const bob = await it.user('bob');
  writeFileSync(
    join(app, 'client.mjs'),
    `import WebSocket from 'ws';
import { ChatClient } from 'chat-service/client';
const session = JSON.parse(process.env.SESSION);
const client = new ChatClient({ baseUrl: process.env.CHAT_ENDPOINT, WebSocket });
client.setAuth(session);
const got = new Promise((resolve) => client.on('message.new', (e) => resolve(e.message.content)));
await client.connect();
const chat = await client.directChat(process.env.FRIEND);
await client.send(chat.chatId, 'hello from the package');
console.log(JSON.stringify({ echoed: await got }));
client.close();
`,
  );
  const chatted = JSON.parse((await run(process.execPath, ['client.mjs'], { cwd: app, env: { ...env, SESSION: JSON.stringify(first), FRIEND: bob.userId }, timeout: 30_000 })).stdout) as { echoed: string };
  t.same(chatted, { echoed: 'hello from the package' }, 'sends and receives over realtime');

  // Without ws (Node 20 has no global WebSocket): a clear error naming what to pass.
  writeFileSync(
    join(app, 'no-ws.mjs'),
    `import { ChatClient } from 'chat-service/client';
const client = new ChatClient({ baseUrl: process.env.CHAT_ENDPOINT });
client.setAuth(JSON.parse(process.env.SESSION));
await client.connect().then(() => console.log('connected'), (e) => console.log(e.name + ': ' + e.message));
client.close();
`,
  );
  const bare = (await run(process.execPath, ['no-ws.mjs'], { cwd: app, env: { ...env, SESSION: JSON.stringify(first) }, timeout: 30_000 })).stdout.trim();
  if (typeof (globalThis as { WebSocket?: unknown }).WebSocket === 'undefined') t.match(bare, /no WebSocket implementation: pass `WebSocket` \(e\.g\. from the ws package\)/, `says what to install (${bare})`);
  else t.equal(bare, 'connected', 'this Node has a WebSocket of its own');
});
