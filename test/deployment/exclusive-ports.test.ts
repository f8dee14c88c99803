import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { client, freePort, removeDir, startService, type Running } from '../helpers/index.ts';

// A second instance started on the ports of a running one must not share them (uWS binds with
// SO_REUSEPORT unless told otherwise, and the kernel would then split connections between two
// services with different keys and data): it exits non-zero, saying which port is in use.

t.test('a second instance on ports in use exits non-zero naming the port, and the first keeps answering', async (t) => {
  const [controlPort, nodePort] = [await freePort(), await freePort()];
  const ports = { CONTROL_PORT: String(controlPort), NODE_PORT: String(nodePort) };
  const first = await startService(ports);
  const secondDir = mkdtempSync(join(tmpdir(), 'chat-test-'));
  let second: Running | undefined;
  t.teardown(async () => {
    await second?.stop();
    await first.stop();
    removeDir(first.dataDir);
    removeDir(secondDir);
  });

  // Its own data directory, so only the ports are shared. startService rejects when the process
  // exits before it listens, with everything the process wrote.
  const refused = await startService(ports, secondDir).then(
    (running) => {
      second = running;
      return undefined;
    },
    (error: Error) => error,
  );
  t.ok(refused, 'the second instance does not start');
  t.match(refused?.message, /exited with 1 before listening/, 'it exits with status 1');
  t.match(refused?.message, new RegExp(`cannot start: port ${nodePort} on 127\\.0\\.0\\.1 is in use: another process listens there \\(NODE_PORT\\)`), 'the message names the port, the variable that set it, and why');
  t.match(refused?.message, /"code":"PORT_IN_USE"/, 'the log line carries the stable code');

  // Every request reaches the first instance: the same signing keys answer every time.
  const control = client(first.controlUrl);
  const node = client(first.nodeUrl);
  const jwks = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const [keys, health] = await Promise.all([control.get('/.well-known/jwks.json'), node.get('/healthz')]);
    t.equal(keys.status, 200);
    t.equal(health.status, 200);
    jwks.add(keys.text);
  }
  t.equal(jwks.size, 1, 'one instance answers');
  t.ok(first.alive(), 'the first instance still runs');
});
