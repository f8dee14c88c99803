import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import t from 'tap';
import { connectCassandra, DDL_OPTIONS } from '../../common/cassandra/index.ts';
import { HOLD } from '../../node/store/index.ts';
import { client, freePort, newAccount, nodeScript, requireService, startService } from '../helpers/index.ts';

const cassandra = await requireService('cassandra', (line) => t.comment(line));
if (!cassandra) t.skip('cassandra not running', () => undefined);
else {
  const keyspace = `chat_it_${randomBytes(6).toString('hex')}`;
  const env = {
    STORE: 'cassandra',
    CASSANDRA_CONTACT_POINTS: `${cassandra.host}:${cassandra.port}`,
    CASSANDRA_KEYSPACE: keyspace,
    USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000',
    WS_ACTIONS_PER_SECOND: '100000',
  };
  t.teardown(async () => {
    const admin = connectCassandra({ contactPoints: env.CASSANDRA_CONTACT_POINTS, localDataCenter: 'datacenter1' });
    // A schema statement waits as the service's own do (DDL_OPTIONS): a busy Cassandra answers them late.
    await admin.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`, [], DDL_OPTIONS);
    await admin.shutdown();
  });

  t.test('control service and node as separate processes on one Cassandra keyspace; acked messages survive kill -9', async (t) => {
    const nodePort = await freePort();
    const nodeUrl = `http://127.0.0.1:${nodePort}`;
    const control = await startService({ ...env, ROLE: 'control', NODE_PUBLIC_URL: nodeUrl }, undefined, { services: ['control'] });
    t.teardown(() => control.stop());
    let node = await startService({ ...env, ROLE: 'node', NODE_PORT: String(nodePort) }, undefined, { services: ['node'] });
    t.teardown(() => node.stop());

    const mgmt = client(control.controlUrl);
    const token = (await mgmt.post('/api/auth/register', newAccount('cass'))).body.accessToken as string;
    const app = (await mgmt.post('/api/client/apps', { name: 'On Cassandra' }, token)).body;
    const key = (await mgmt.post(`/api/client/apps/${app.id}/keys`, undefined, token)).body;
    t.equal((await mgmt.get(`/api/client/apps/${app.id}`, token)).body.clusterEndpoint, nodeUrl);

    const api = client(nodeUrl);
    t.equal((await api.get('/api/server/whoami', key.token)).status, 200, 'the node verifies a key issued by the control process');
    const users = [];
    for (const username of ['alice', 'bob']) {
      const created = await api.post('/api/users', { username }, key.token);
      users.push((await api.post('/api/users/signin', { userId: created.body.userId }, key.token)).body);
    }
    const [alice, bob] = users;
    const chat = (await api.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt)).body;
    // Two bursts of 25: below the load shedder's floor of 32 sends in progress (common/limits).
    const send = (i: number) => api.call('POST', `/api/messages/${chat.chatId}`, { token: alice.jwt, body: { content: `m${i}`, idempotencyKey: `k${i}` } });
    const acks = [...(await Promise.all(Array.from({ length: 25 }, (_, i) => send(i)))), ...(await Promise.all(Array.from({ length: 25 }, (_, i) => send(25 + i))))];
    t.ok(acks.every((a) => a.status === 201 || a.status === 200), `all 50 acked (${[...new Set(acks.map((a) => a.status))].join(', ')})`);
    await node.kill();
    node = await startService({ ...env, ROLE: 'node', NODE_PORT: String(nodePort) }, undefined, { services: ['node'] });
    const page = await api.get(`/api/messages/getMessages/${chat.chatId}?size=100`, bob.jwt);
    t.equal(page.status, 200);
    t.same(page.body.messages.map((m: { seq: number }) => m.seq), Array.from({ length: 50 }, (_, i) => 50 - i), 'every acked message, once, in order');
    // The killed process still holds the chat until its hold times out (HOLD.ttlSeconds): until
    // then a send is refused with 503 and nothing is written; the client retries with its key.
    let next = await api.call('POST', `/api/messages/${chat.chatId}`, { token: alice.jwt, body: { content: 'after the restart', idempotencyKey: 'after' } });
    const retryUntil = Date.now() + 15_000;
    while (next.status === 503 && Date.now() < retryUntil) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      next = await api.call('POST', `/api/messages/${chat.chatId}`, { token: alice.jwt, body: { content: 'after the restart', idempotencyKey: 'after' } });
    }
    t.equal(next.status, 201, 'a send after the restart is accepted once the crashed process’s hold has timed out');
    const seq = next.body.message.seq as number;
    // The killed process had taken numbers ahead of its head: HOLD.minReserve at its claim, and at
    // each renewal (about a second into a busy hold) twice what it used since, at least minReserve.
    // Its head was at most 50, so the numbers skipped end by 50 + max(minReserve, 2 × 50).
    const reservedUpTo = 50 + Math.max(HOLD.minReserve, 2 * 50);
    t.ok(seq > 50 && seq <= reservedUpTo + 1, `numbering continues after the restart, past the numbers the killed process had taken (seq ${seq}, at most ${reservedUpTo + 1})`);
    const after = await api.get(`/api/messages/getMessages/${chat.chatId}?size=100`, bob.jwt);
    t.same(after.body.messages.map((m: { seq: number }) => m.seq), [seq, ...Array.from({ length: 50 }, (_, i) => 50 - i)], 'no acked message lost, none doubled');

    // The operator command works on the same keyspace.
    const ctl = (...args: string[]) => promisify(execFile)(process.execPath, [...nodeScript('control/cli.ts'), ...args], { cwd: new URL('../..', import.meta.url).pathname, env: { ...process.env, ...env } });
    t.match((await ctl('app', 'suspend', app.id)).stdout, /SUSPENDED/);
    t.equal((await mgmt.post(`/api/client/apps/${app.id}/keys`, undefined, token)).body.code, 'APP_SUSPENDED', 'a suspended application gets no keys');
    await ctl('app', 'reactivate', app.id);
    // Cluster commands read the registry and scan the applications table of the keyspace.
    t.match(JSON.parse((await ctl('cluster', 'list', '--json')).stdout), { name: 'demo', endpoint: nodeUrl, status: 'ACTIVE', applications: 1 }, 'cluster list');
    await ctl('cluster', 'register', 'eu-1', 'http://127.0.0.1:9', '--status', 'DRAINING');
    await t.rejects(ctl('app', 'move', app.id, '--cluster', 'eu-1'), { code: 1 }, 'no move onto a DRAINING cluster');
    t.match(JSON.parse((await ctl('app', 'list', '--cluster', 'demo', '--json')).stdout), { id: app.id, clusterName: 'demo' }, 'app list');

    await mgmt.del(`/api/client/apps/${app.id}/keys/${key.id}`, token);
    const deadline = Date.now() + 2000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) status = (await api.get('/api/server/whoami', key.token)).status;
    t.equal(status, 401, 'a revocation in the control process reaches the node within its cache lifetime');
  });
}
