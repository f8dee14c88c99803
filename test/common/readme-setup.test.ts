import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { removeDir, startService } from '../helpers/index.ts';

// The README's setup block, run verbatim in bash against a running service, twice in a row: the
// first run registers, the second logs in and takes the same application; both end with the
// cluster accepting a new key.
const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

const svc = await startService();
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});

t.test('the setup block runs twice in a row, without an error', async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Setup sequence'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  t.match(block, /^C=http:\/\/127\.0\.0\.1:8080$/m, 'the block as printed');
  // Only the control address differs from the README: the test's service listens on its own port.
  const script = block.replace(/^C=.*$/m, `C=${svc.controlUrl}`) + '\necho\necho "APP=$APP"\n';
  const outputs: string[] = [];
  for (const round of [1, 2]) {
    const { stdout, stderr } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, timeout: 60_000 }).catch((error: { stdout: string; stderr: string }) => error);
    t.equal(stderr, '', `run ${round}: nothing on stderr`);
    t.notMatch(stdout, /undefined|"code"/, `run ${round}: no undefined field and no problem response`);
    const lines = stdout.trim().split('\n');
    t.equal(lines[0], svc.nodeUrl, `run ${round}: prints the cluster endpoint`);
    t.match(JSON.parse(lines[1]!), { appId: String, keyId: String }, `run ${round}: the cluster accepts the key`);
    outputs.push(lines[2]!);
  }
  t.equal(outputs[0], outputs[1], 'the second run takes the application the first one made');
});
