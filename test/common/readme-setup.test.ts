import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { removeDir, startService } from '../helpers/index.ts';

// The README's setup block and its backend and browser flows, run verbatim in bash against a
// running service, twice in a row: the first run registers, the second logs in, takes the same
// application and users, and finds the same chat and message (the send is idempotent).
const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

const svc = await startService();
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});

t.test('the setup block and the backend and browser flows run twice in a row, without an error', async (t) => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blockAfter = (heading: string) => /```sh\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf(heading)))![1]!;
  const setup = blockAfter('## Setup sequence');
  t.match(setup, /^C=http:\/\/127\.0\.0\.1:8080$/m, 'the block as printed');
  // Only the control address differs from the README: the test's service listens on its own port.
  const script = [setup.replace(/^C=.*$/m, `C=${svc.controlUrl}`), blockAfter('### Backend flow'), blockAfter('### Browser flow'), 'echo', 'echo "APP=$APP ALICE=$ALICE BOB=$BOB CHAT=$CHAT"'].join('\n');
  const outputs: string[] = [];
  for (const round of [1, 2]) {
    const { stdout, stderr } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, timeout: 60_000 }).catch((error: { stdout: string; stderr: string }) => error);
    t.equal(stderr, '', `run ${round}: nothing on stderr`);
    t.notMatch(stdout, /undefined|"code"/, `run ${round}: no undefined field and no problem response`);
    const lines = stdout.trim().split('\n');
    t.equal(lines[0], svc.nodeUrl, `run ${round}: prints the cluster endpoint`);
    t.match(lines[1], /^\{"appId":"[0-9a-f-]{36}","keyId":"[0-9a-f-]{36}"/, `run ${round}: the cluster accepts the key`);
    t.match(lines[1], /"content":"Hello Bob"/, `run ${round}: the message is sent and read back`);
    outputs.push(lines.at(-1)!);
  }
  t.match(outputs[0], /^APP=\S+ ALICE=\S+ BOB=\S+ CHAT=\S+$/);
  t.equal(outputs[0], outputs[1], 'the second run takes the same application, users and chat');
});
