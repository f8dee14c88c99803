import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import WebSocket from 'ws';
import { client, freePort, requireService, WsClient } from '../helpers/index.ts';
import { fullHistory } from '../helpers/chat-load.ts';
import { clusterApp, startCluster } from '../helpers/cluster.ts';

// This suite stops and starts a Cassandra of its own (the shared one serves other suites meanwhile).
const shared = await requireService('cassandra', (line) => t.comment(line));
const redis = await requireService('redis', (line) => t.comment(line));

if (!shared || !redis) t.skip('cassandra or redis not running', () => undefined);
else {
  t.test('Cassandra stopped: sends are refused with 503 and never acknowledged; the nodes recover by themselves when it returns', async (t) => {
    const root = new URL('../..', import.meta.url).pathname;
    const state = mkdtempSync(join(tmpdir(), 'chat-cassandra-outage-'));
    const [port, storagePort] = [await freePort(), await freePort()];
    // No JMX: the shared node has the default port (nodetool is not used here).
    const env = { ...process.env, SERVICES_STATE_DIR: state, CASSANDRA_PORT: String(port), CASSANDRA_STORAGE_PORT: String(storagePort), CASSANDRA_JMX_PORT: 'off' };
    const services = (command: string) => promisify(execFile)(join(root, 'scripts/services.sh'), [command, 'cassandra'], { env, timeout: 240_000 });
    await services('start');
    t.teardown(async () => {
      await services('stop').catch(() => undefined);
      rmSync(state, { recursive: true, force: true });
    });

    const cluster = await startCluster({ size: 2, cassandra: `127.0.0.1:${port}`, redisUrl: `redis://${redis.host}:${redis.port}` });
    t.teardown(() => cluster.stop());
    const { users } = await clusterApp(cluster, ['ann', 'ben']);
    const [ann, ben] = users as [typeof users[0], typeof users[0]];
    const [n0, n1] = cluster.nodes as [typeof cluster.nodes[0], typeof cluster.nodes[0]];
    const chat = (await client(n0.url).post('/api/chats', { type: 'direct', userId: ben.userId }, ann.jwt)).body;
    const send = (url: string, key: string) => client(url).post(`/api/messages/${chat.chatId}`, { content: key, idempotencyKey: key }, ann.jwt);
    t.equal((await send(n0.url, 'before')).status, 201, 'a send before the outage is acknowledged');
    const socket = await WsClient.connect(n1.url, ann.jwt);
    t.teardown(() => socket.close());

    const stoppedAt = Date.now();
    await services('stop');
    t.comment(`Cassandra stopped in ${Date.now() - stoppedAt} ms`);
    const refused: string[] = [];
    const statuses = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const r = await send(i % 2 ? n1.url : n0.url, `during-${i}`);
      statuses.add(r.status);
      if (r.status !== 201 && r.status !== 200) refused.push(`during-${i}`);
      if (r.status === 503) t.equal(r.body.code, 'UNAVAILABLE', 'the problem names the cause');
    }
    t.same([...statuses], [503], 'every send during the outage is refused with 503, through either node');
    const overWs = await socket.request({ type: 'message.send', chatId: chat.chatId, content: 'during-ws', idempotencyKey: 'during-ws' }, 20_000);
    t.equal(overWs.type, 'error', 'a WebSocket send is refused too');
    t.equal(overWs.code, 'UNAVAILABLE');
    const fresh = new WebSocket(`${n0.url.replace(/^http/, 'ws')}/ws?token=${ben.jwt}`);
    const closed = await new Promise<{ code: number; reason: string }>((resolve) => fresh.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    t.equal(closed.code, 4002, 'a new socket whose chats cannot be loaded is closed with 4002');
    t.match(JSON.parse(closed.reason), { reconnect: 'now' }, 'telling the client to reconnect and resume');

    const restartedAt = Date.now();
    await services('start');
    t.comment(`Cassandra back in ${Date.now() - restartedAt} ms`);
    let recoveredAfter = Infinity;
    for (let i = 0; Date.now() - restartedAt < 90_000; i++) {
      const [a, b] = await Promise.all([send(n0.url, `after-${i}-a`), send(n1.url, `after-${i}-b`)]);
      if ((a.status === 201 || a.status === 200) && (b.status === 201 || b.status === 200)) {
        recoveredAfter = Date.now() - restartedAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    t.comment(`both nodes acknowledged sends again ${recoveredAfter} ms after Cassandra was started`);
    t.ok(Number.isFinite(recoveredAfter), 'the nodes recovered without a restart');
    const history = await fullHistory(n1.url, chat.chatId, ben.jwt);
    const contents = history.map((m) => m.content);
    t.ok(contents.includes('before'), 'what was acknowledged before the outage is kept');
    t.same(refused.filter((k) => contents.includes(k)), [], 'nothing refused during the outage was stored');
    t.notOk(contents.includes('during-ws'), 'nor the refused WebSocket send');
    t.same(history.map((m) => m.seq), history.map((_, i) => i + 1), 'numbering continues without a hole');
  });
}
