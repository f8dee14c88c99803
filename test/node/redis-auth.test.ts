import { spawn } from 'node:child_process';
import t from 'tap';
import { RedisBus } from '../../node/bus/index.ts';
import { freePort } from '../helpers/index.ts';
import { controlCrosses, recordingLog } from './bus-helpers.ts';

// README, Security: Redis gets a password through REDIS_URL (ioredis reads it): a bus connects
// with the right one and is refused with a wrong one. A Redis of its own, requiring a password.
const port = await freePort();
const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--requirepass', 'correct-horse', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
t.teardown(() => void server.kill());
const spawned = await new Promise<boolean>((resolve) => {
  server.once('error', () => resolve(false));
  server.once('spawn', () => resolve(true));
});
if (!spawned) t.fail('redis-server could not be started (it is needed for this test)');
else {
  await new Promise((resolve) => setTimeout(resolve, 300));

  t.test('a bus connects to a Redis that requires a password, given it in REDIS_URL', async (t) => {
    const url = `redis://:correct-horse@127.0.0.1:${port}`;
    const [a, b] = await Promise.all([0, 1].map((i) => RedisBus.connect({ url, nodeId: `n${i}`, prefix: 'auth-test:', log: recordingLog() })));
    t.teardown(() => Promise.all([a!.close(), b!.close()]));
    t.ok(await controlCrosses(a!, b!, 'hello'), 'published on one bus, received on the other');
  });

  t.test('a wrong password is refused at start', async (t) => {
    await t.rejects(RedisBus.connect({ url: `redis://:wrong@127.0.0.1:${port}`, nodeId: 'x', prefix: 'auth-test:', log: recordingLog() }), 'connect rejects');
  });
}
