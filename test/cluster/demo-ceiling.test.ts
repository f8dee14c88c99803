import t from 'tap';
import WebSocket from 'ws';
import { WsClient } from '../helpers/index.ts';
import { clusterApp, clusterBackends, startCluster } from '../helpers/cluster.ts';

// The DEMO ceiling is the cluster's, not a node's: with DEMO_MAX_CONCURRENT_USERS = 3, three users
// connected to two nodes fill it, the fourth is closed with 4010 on whichever node it tries, and
// after one disconnects a new user gets in.
const CEILING = 3;
const backends = await clusterBackends(t);
if (backends) {
  const cluster = await startCluster({ size: 2, ...backends, env: { DEMO_MAX_CONCURRENT_USERS: String(CEILING) } });
  t.teardown(() => cluster.stop());

  /** `ready`, or the close code that ended the socket first. */
  const attempt = (url: string, jwt: string) =>
    new Promise<{ ready: boolean; code?: number; ws: WebSocket }>((resolve) => {
      const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(jwt)}`);
      ws.on('message', (data) => (JSON.parse(String(data)) as { type: string }).type === 'ready' && resolve({ ready: true, ws }));
      ws.on('close', (code) => resolve({ ready: false, code, ws }));
    });

  t.test('ceiling + 1 distinct users across two nodes: exactly the last is refused; after one leaves, a new user gets in', async (t) => {
    const { users } = await clusterApp(cluster, ['ann', 'ben', 'cat', 'dan', 'eve']);
    const [a, b] = cluster.nodes.map((n) => n.url) as [string, string];
    const open: WsClient[] = [];
    t.teardown(() => Promise.all(open.map((s) => s.close())));
    open.push(await WsClient.connect(a, users[0]!.jwt), await WsClient.connect(b, users[1]!.jwt), await WsClient.connect(a, users[2]!.jwt));
    t.pass('three users on two nodes');
    for (const url of [a, b]) {
      const refused = await attempt(url, users[3]!.jwt);
      t.same([refused.ready, refused.code], [false, 4010], `the fourth is closed with 4010 on ${url === a ? 'the first' : 'the second'} node`);
    }
    open.push(await WsClient.connect(b, users[0]!.jwt));
    t.pass('a connected user opens a socket on the other node too');
    for (const s of open) t.equal(s.closed, undefined, 'nobody connected was touched');
    await open[1]!.close(); // ben leaves node b
    let admitted = false;
    for (let i = 0; i < 30 && !admitted; i++) {
      const next = await attempt(a, users[3]!.jwt);
      admitted = next.ready;
      if (next.ready) t.teardown(() => next.ws.close());
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.ok(admitted, 'after one leaves (on the other node), a new user gets in');
    t.same((await attempt(b, users[4]!.jwt)).code, 4010, 'and the ceiling holds again');
  });
}
