import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import t from 'tap';

// A service started for a test or a benchmark (bin/spawn.ts) gets a data directory of its own
// under the system's temporary one. It stays while the process that started it runs (restart
// tests reopen it after a stop or a kill) and is removed when that process exits: test runs do
// not pile up stores.
const SPAWN = new URL('../../bin/spawn.ts', import.meta.url).href;
const ROOT = new URL('../../', import.meta.url).pathname;

t.test('the data directory outlives its service, reopened after a stop, and goes when the process that made it exits', async (t) => {
  const script = `
    import { existsSync, readdirSync } from 'node:fs';
    import { startService } from ${JSON.stringify(SPAWN)};
    const first = await startService();
    await first.stop();
    const kept = existsSync(first.dataDir) && readdirSync(first.dataDir).length > 0;
    const again = await startService({}, first.dataDir);
    await again.kill();
    console.log(JSON.stringify({ dir: first.dataDir, kept, stillThere: existsSync(first.dataDir) }));
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, timeout: 60_000 });
  const seen = JSON.parse(stdout.trim().split('\n').at(-1)!) as { dir: string; kept: boolean; stillThere: boolean };
  t.ok(seen.kept, 'after a stop the store is still there, and a restart reopens it');
  t.ok(seen.stillThere, 'after a kill too, while the process that made it runs');
  t.notOk(existsSync(seen.dir), `removed once that process exited (${seen.dir})`);
});

t.test('a service does not outlive the process that started it, even one killed (as tap kills a file at its timeout)', async (t) => {
  const script = `
    import { startService } from ${JSON.stringify(SPAWN)};
    const running = await startService();
    console.log(JSON.stringify({ pid: running.pid }));
    setInterval(() => undefined, 1000);
  `;
  const starter = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const pid = await new Promise<number>((resolve, reject) => {
    starter.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"pid"'));
      if (line) resolve((JSON.parse(line) as { pid: number }).pid);
    });
    starter.once('exit', (code) => reject(new Error(`the starter exited (${code}) before its service listened`)));
  });
  const alive = (p: number) => {
    try {
      process.kill(p, 0);
      return true;
    } catch {
      return false;
    }
  };
  t.ok(alive(pid), `the service runs (pid ${pid})`);
  starter.kill('SIGKILL');
  let gone = false;
  for (let i = 0; i < 100 && !gone; i++) {
    await new Promise((r) => setTimeout(r, 100));
    gone = !alive(pid);
  }
  if (!gone) process.kill(pid, 'SIGKILL');
  t.ok(gone, 'its service is gone within 10 s of the starter being killed');
});
