import { readFileSync } from 'node:fs';
import t from 'tap';
import { SERVICE_NODE_FLAGS } from '../../bin/spawn.ts';
import { startService } from '../helpers/index.ts';

// The service runs with the V8 flags of SERVICE_NODE_FLAGS (a larger young generation; see
// bin/spawn.ts): `npm start` passes them, and so does bin/spawn.ts, which starts the services of
// the tests and the benchmarks, so what is measured is what a user runs.
const ROOT = new URL('../../', import.meta.url).pathname;

t.test('npm start passes every service flag to node, before the service script: the compiled build, which prestart makes', async (t) => {
  const scripts = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts;
  const start = scripts.start!;
  const words = start.split(/\s+/);
  t.equal(words[0], 'node');
  t.ok(words.includes('build/bin/start.mjs'), `the build is what runs (${start})`);
  t.match(scripts.prestart!, /npm run build:service/, 'and prestart builds it first');
  t.ok(SERVICE_NODE_FLAGS.length > 0);
  for (const flag of SERVICE_NODE_FLAGS) {
    t.ok(words.includes(flag), `${flag} is in "${start}"`);
    t.ok(words.indexOf(flag) < words.indexOf('build/bin/start.mjs'), `${flag} comes before the script (else it would be the script's argument)`);
  }
});

t.test('a started service runs with them: its young generation may grow to 64 MiB a semi-space', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const argv = readFileSync(`/proc/${svc.pid}/cmdline`, 'utf8').split('\0');
  for (const flag of SERVICE_NODE_FLAGS) t.ok(argv.includes(flag), `${flag} in the process's arguments`);
  // The script is the source (bin/start.ts through tsx) or its compiled form (build/bin/start.mjs).
  const script = argv.findIndex((a) => /bin\/start\.(ts|mjs)$/.test(a));
  t.ok(script > 0, `the service script is in the arguments (${argv.join(' ')})`);
  t.ok(argv.indexOf(SERVICE_NODE_FLAGS[0]!) < script, 'given to node, not to the script');
});
