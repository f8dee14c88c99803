import t from 'tap';
import { client, WsClient } from '../helpers/index.ts';
import { clusterApp, clusterBackends, startCluster } from '../helpers/cluster.ts';

// Usage in a cluster is the cluster's: every node adds its own counts (Cassandra counters), the
// concurrent-user samples read cluster-wide presence, and the control service serves the sum.
const backends = await clusterBackends(t);
if (backends) {
  const cluster = await startCluster({ size: 2, ...backends, env: { USAGE_FLUSH_SECONDS: '1' } });
  t.teardown(() => cluster.stop());

  t.test('users, chats and messages made on two nodes add up; concurrent users are counted cluster-wide', async (t) => {
    const { appId, mgmtToken, users, key } = await clusterApp(cluster, ['ann', 'ben', 'cat']);
    const [a, b] = cluster.nodes.map((n) => client(n.url));
    const [ann, ben, cat] = users as [(typeof users)[0], (typeof users)[0], (typeof users)[0]];
    const ab = await a!.post('/api/chats', { type: 'direct', userId: ben.userId }, ann.jwt);
    const bc = await b!.post('/api/chats', { type: 'direct', userId: cat.userId }, ben.jwt);
    t.same([ab.status, bc.status], [201, 201], 'one chat created on each node');
    for (let i = 0; i < 3; i++) t.equal((await a!.post(`/api/messages/${ab.body.chatId}`, { content: `a${i}` }, ann.jwt)).status, 201);
    for (let i = 0; i < 2; i++) t.equal((await b!.post(`/api/messages/${bc.body.chatId}`, { content: `b${i}` }, cat.jwt)).status, 201);
    const open = [await WsClient.connect(cluster.nodes[0]!.url, ann.jwt), await WsClient.connect(cluster.nodes[1]!.url, ben.jwt), await WsClient.connect(cluster.nodes[1]!.url, ann.jwt)];
    t.teardown(() => Promise.all(open.map((s) => s.close())));

    const mgmt = client(cluster.control.controlUrl);
    const deadline = Date.now() + 15_000;
    let u: Record<string, any> = {};
    while (Date.now() < deadline) {
      u = (await mgmt.get(`/api/client/apps/${appId}/usage`, mgmtToken)).body;
      // Each node flushes on its own clock: wait for every figure (a chat is counted where it was
      // created, its messages where its owner is).
      if (u.registeredUsers === 3 && u.chats === 2 && u.messages === 5 && u.concurrentUsers?.current === 2) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    t.match(u, { registeredUsers: 3, chats: 2, messages: 5, concurrentUsers: { current: 2, peak: 2 } }, 'three users, two chats, five messages, two users connected on two nodes');
    t.equal(u.days.at(-1).messages, 5, "today's messages");
    const keys = (await mgmt.get(`/api/client/apps/${appId}/keys`, mgmtToken)).body.keys as { id: string; lastUsedAt: string | null }[];
    t.ok(keys.find((k) => k.id === key.id)?.lastUsedAt, 'the key has a last use');
  });
}
