import t from 'tap';
import { client, WsClient } from '../helpers/index.ts';
import { clusterApp, clusterBackends, startCluster } from '../helpers/cluster.ts';

// An application deleted in the control service ends its users' sessions on every node within a
// second: open sockets close with 4501, JWTs and refresh tokens are refused everywhere.
const backends = await clusterBackends(t);
if (backends) {
  const cluster = await startCluster({ size: 3, ...backends, env: { KEY_STATUS_TTL_MS: '1000' } });
  t.teardown(() => cluster.stop());

  t.test("deleting an application ends its users' sessions on every node within a second", async (t) => {
    const { appId, mgmtToken, users } = await clusterApp(cluster, ['ann', 'ben', 'cat']);
    const sockets = await Promise.all(users.map((u, i) => WsClient.connect(cluster.nodes[i]!.url, u.jwt)));
    t.teardown(() => sockets.forEach((s) => s.close()));
    // Every node has used the application's status before the deletion (it is cached as live).
    for (const [i, node] of cluster.nodes.entries()) t.equal((await client(node.url).get('/api/chats', users[i]!.jwt)).status, 200, `node ${i} serves ann's app`);

    t.equal((await client(cluster.control.controlUrl).del(`/api/client/apps/${appId}`, mgmtToken)).status, 204);
    const deletedAt = Date.now();
    const closes = await Promise.all(sockets.map((s) => s.waitClosed()));
    const took = Date.now() - deletedAt;
    t.same(closes.map((c) => c.code), [4501, 4501, 4501], 'the sockets on all three nodes close with 4501');
    t.ok(took < 1000, `within a second (${took} ms)`);
    for (const [i, node] of cluster.nodes.entries()) {
      const res = await client(node.url).get('/api/chats', users[i]!.jwt);
      t.equal(res.status, 401, `node ${i} refuses the JWT`);
    }
    t.ok(Date.now() - deletedAt < 2000, 'all refused soon after');
  });
}
