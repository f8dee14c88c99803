import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { freePort, removeDir } from '../helpers/index.ts';
import { requireService } from '../helpers/services.ts';

// What `npm start` says when it cannot start: a bad setting lists what is allowed; an unreachable
// Cassandra or Redis, or a setting that cannot work, ends with one line saying why and what to
// set, and a non-zero exit; no stack trace anywhere.
const ROOT = new URL('../../', import.meta.url).pathname;

async function start(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'chat-start-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dir, NODE_PORT: '0', CONTROL_PORT: '0', NODE_RPC_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    clearTimeout(timer);
    return { code, stdout, stderr };
  } finally {
    removeDir(dir);
  }
}

const noStack = (t: Test, out: { stdout: string; stderr: string }) => t.notMatch(out.stdout + out.stderr, /\n\s+at /, 'no stack trace');

t.test('a bad setting: every bad variable named, with the values allowed', async (t) => {
  const out = await start({ LOG_LEVEL: 'loud', STORE: 'disk' });
  t.equal(out.code, 2, 'exit status 2 (a setting, not the environment)');
  t.match(out.stderr, /LOG_LEVEL="loud": must be one of: "fatal", "error", "warn", "info", "debug", "trace", "silent"/);
  t.match(out.stderr, /STORE="disk": must be one of: "embedded", "cassandra"/);
  noStack(t, out);
});

t.test('BUS=redis on the embedded store: refused as a setting, before anything is reached', async (t) => {
  const out = await start({ BUS: 'redis', REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
  t.equal(out.code, 2);
  t.same(out.stderr.trim().split('\n'), ['invalid configuration:', '  BUS="redis": runs several nodes, which must share one store: set STORE=cassandra (STORE="embedded")']);
  noStack(t, out);
});

t.test('Cassandra unreachable: one line naming where it was looked for', async (t) => {
  const port = await freePort();
  const out = await start({ STORE: 'cassandra', CASSANDRA_CONTACT_POINTS: `127.0.0.1:${port}` });
  t.equal(out.code, 1);
  t.same(out.stderr.trim().split('\n'), [`cannot start: Cassandra cannot be reached at 127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port}): is it running? (scripts/services.sh start), or set CASSANDRA_CONTACT_POINTS`]);
  t.match(out.stdout, /"event":"start_failed"/, 'the log says it too');
  noStack(t, out);
});

t.test('Redis unreachable: one line, the password hidden', async (t) => {
  const cassandra = await requireService('cassandra', (line) => t.comment(line));
  if (!cassandra) return t.skip('cassandra not running', () => undefined);
  const port = await freePort();
  const out = await start({ STORE: 'cassandra', CASSANDRA_CONTACT_POINTS: `${cassandra.host}:${cassandra.port}`, CASSANDRA_KEYSPACE: 'chat_start_failures', BUS: 'redis', REDIS_URL: `redis://:hunter2@127.0.0.1:${port}` });
  t.equal(out.code, 1);
  t.same(out.stderr.trim().split('\n'), [`cannot start: Redis cannot be reached at redis://:***@127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port}): is it running? (scripts/services.sh start), or set REDIS_URL`]);
  t.notMatch(out.stdout + out.stderr, /hunter2/, 'the password is shown nowhere');
  noStack(t, out);
});
