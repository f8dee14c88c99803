import { randomUUID } from 'node:crypto';
import t from 'tap';
import { Cluster, Redis } from 'ioredis';
import { channelOf, parseRedisNodes, RedisBus } from '../../node/bus/index.ts';
import { client, requireService, WsClient } from '../helpers/index.ts';
import { clusterApp, startCluster } from '../helpers/cluster.ts';
import { recordingLog } from '../node/bus-helpers.ts';

// Three node processes and the control service on a Redis Cluster (REDIS_CLUSTER_NODES) and the
// single Cassandra: a message sent on one node reaches the sockets on the others, presence and
// key revocations cross too, and the chat's channel lives on the cluster, sharded.
const LIST = process.env.HA_REDIS_CLUSTER_NODES || '127.0.0.21:6379,127.0.0.22:6379,127.0.0.23:6379,127.0.0.24:6379,127.0.0.25:6379,127.0.0.26:6379';
const HOW = 'start it with: scripts/services.sh start --topology ha redis (or point HA_REDIS_CLUSTER_NODES at one)';

/** A local check in the manner of requireService: a loud skip, or with CI=true an error. */
async function redisClusterUp(): Promise<boolean> {
  const nodes = parseRedisNodes(LIST);
  if (nodes instanceof Error) throw new Error(`HA_REDIS_CLUSTER_NODES: ${nodes.message}`);
  for (const node of nodes) {
    const probe = new Redis({ ...node, lazyConnect: true, connectTimeout: 1_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    const ok = await probe.connect().then(async () => /cluster_state:ok/.test(String(await probe.cluster('INFO'))), () => false);
    probe.disconnect();
    if (ok) return true;
  }
  if (process.env.CI === 'true') throw new Error(`no Redis Cluster at ${LIST} and CI=true: ${HOW}`);
  t.comment(`SKIPPED: no Redis Cluster at ${LIST}; ${HOW}`);
  return false;
}

const cassandra = await requireService('cassandra', (line) => t.comment(line));
if (!cassandra || !(await redisClusterUp())) {
  t.skip('cassandra or the Redis Cluster not running', () => undefined);
} else {
  const nodes = parseRedisNodes(LIST) as { host: string; port: number }[];
  const cluster = await startCluster({
    size: 3,
    cassandra: `${cassandra.host}:${cassandra.port}`,
    // With REDIS_CLUSTER_NODES set, REDIS_URL gives only credentials and TLS (none here).
    redisUrl: `redis://${nodes[0]!.host}:${nodes[0]!.port}`,
    env: { REDIS_CLUSTER_NODES: LIST, KEY_STATUS_TTL_MS: '1000' },
  });
  t.teardown(() => cluster.stop());
  const admin = new Cluster(nodes.map((n) => ({ ...n })));
  admin.on('error', () => undefined);
  t.teardown(() => admin.quit());
  const [n0, n1, n2] = cluster.nodes as [(typeof cluster.nodes)[0], (typeof cluster.nodes)[0], (typeof cluster.nodes)[0]];
  const prefix = `${cluster.env.CLUSTER_NAME}:`;

  t.test('a message sent on node 1 reaches the sockets on nodes 2 and 3, through the chat’s shard', async (t) => {
    const { appId, users } = await clusterApp(cluster, ['ann', 'ben', 'cat']);
    const [ann, ben, cat] = users as [(typeof users)[0], (typeof users)[0], (typeof users)[0]];
    const chatId = (await client(n0.url).post('/api/chats', { type: 'group', name: 'sharded', memberIds: [ben.userId, cat.userId] }, ann.jwt)).body.chatId as string;
    t.ok(chatId, 'chat created');
    const sockets = await Promise.all([
      WsClient.connect(n0.url, ann.jwt),
      WsClient.connect(n1.url, ben.jwt, { encoding: 'msgpack' }),
      WsClient.connect(n2.url, cat.jwt),
    ]);
    t.teardown(() => sockets.forEach((s) => s.close()));
    const channel = channelOf(prefix, { kind: 'chat', appId, chatId });
    const subscribers = async () => {
      const counts = await Promise.all(admin.nodes('master').map(async (m) => Number(((await m.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number])[1])));
      return counts.reduce((a, b) => a + b, 0);
    };
    // Each node with a member's socket subscribes to the chat's channel (the owner publishes it).
    for (let i = 0; i < 100 && (await subscribers()) < 3; i++) await new Promise((r) => setTimeout(r, 50));
    t.equal(await subscribers(), 3, 'the three nodes are subscribed to the chat on the master owning its slot');

    const ack = await sockets[0].request({ type: 'message.send', chatId, content: 'across shards', idempotencyKey: 'k1' });
    t.equal(ack.type, 'ack', 'sent on node 1');
    for (const [i, s] of sockets.entries()) {
      const frame = await s.waitFor((f) => f.type === 'message.new' && f.chatId === chatId, 5_000);
      t.equal(frame.message.content, 'across shards', `the socket on node ${i + 1} got it`);
    }
    const reply = await sockets[2].request({ type: 'message.send', chatId, content: 'and back', idempotencyKey: 'k2' });
    t.equal(reply.type, 'ack');
    for (const s of sockets) await s.waitFor((f) => f.type === 'message.new' && f.message?.content === 'and back', 5_000);
    t.pass('a message sent on node 3 reaches nodes 1 and 2');
    for (const [i, s] of sockets.entries()) t.equal(s.frames.filter((f) => f.type === 'message.new' && f.chatId === chatId).length, 2, `node ${i + 1}: each once`);

    const asked = await sockets[2].request({ type: 'presence.query', userIds: [ann.userId, ben.userId] });
    t.same(asked.result, { online: [ann.userId, ben.userId] }, 'presence (leases on the cluster) sees users of the other nodes');
  });

  t.test('a key revocation crosses from the control service to every node over the cluster', async (t) => {
    const { appId, key, mgmtToken } = await clusterApp(cluster, []);
    const listener = await RedisBus.connect({ url: 'redis://', cluster: nodes, nodeId: `listener-${randomUUID()}`, prefix, log: recordingLog() });
    t.teardown(() => listener.close());
    const heard: string[] = [];
    listener.subscribe({ kind: 'control' }, (payload) => void heard.push(String(Buffer.from(payload as Uint8Array))));
    await listener.ready();
    for (const node of [n0, n1, n2]) t.equal((await client(node.url).get('/api/server/whoami', key.token)).status, 200, 'the key works');
    t.equal((await client(cluster.control.controlUrl).del(`/api/client/apps/${appId}/keys/${key.id}`, mgmtToken)).status, 204);
    for (let i = 0; i < 100 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    t.ok(heard.length > 0, 'the control service announced it on the sharded control channel');
    const refused = await Promise.all(
      [n0, n1, n2].map(async (node) => {
        for (let i = 0; i < 40; i++) {
          if ((await client(node.url).get('/api/server/whoami', key.token)).status === 401) return true;
          await new Promise((r) => setTimeout(r, 25));
        }
        return false;
      }),
    );
    t.same(refused, [true, true, true], 'every node refuses the key within a second');
  });

  t.test('no node logged a Redis protocol error', async (t) => {
    for (const [i, node] of cluster.nodes.entries()) t.notMatch(node.process.output(), /Protocol error/, `node ${i + 1}`);
    t.notMatch(cluster.control.output(), /Protocol error/, 'control service');
  });
}
