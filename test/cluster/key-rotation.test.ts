import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { TokenVerifier } from '../../common/jwt/index.ts';
import { client, nodeScript } from '../helpers/index.ts';
import { clusterApp, clusterBackends, startCluster, type ClusterNode } from '../helpers/cluster.ts';

// The node signing key is rotated by the operator command while a cluster serves: user JWTs move
// to the new key on every node, and node-to-node forwarding (authenticated with a key derived from
// the signing key) never stops, on open connections and on new ones.

const ROOT = new URL('../..', import.meta.url).pathname;
const run = promisify(execFile);

const backends = await clusterBackends(t);
if (backends) {
  const cluster = await startCluster({ size: 2, ...backends, env: { SIGNING_KEY_REFRESH_SECONDS: '1' } });
  t.teardown(() => cluster.stop());

  t.test('rotating the node key mid-traffic: JWTs move to the new key everywhere, and forwarding to the chat owner never fails', async (t) => {
    const { users, appId, key } = await clusterApp(cluster, ['ann', 'ben']);
    const [ann, ben] = users as [(typeof users)[0], (typeof users)[0]];
    const chat = (await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'group', name: 'rotating', memberIds: [ben.userId] }, ann.jwt)).body;
    let sent = 0;
    const send = async (node: ClusterNode, jwt: string) => (await client(node.url).post(`/api/messages/${chat.chatId}`, { content: `m${++sent}` }, jwt)).status;
    const notOwner = () => cluster.nodes.find((n) => n !== cluster.ownerOf(appId, chat.chatId))!;
    t.equal(await send(notOwner(), ann.jwt), 201, 'a send through the other node is forwarded to the owner');

    const { stdout } = await run(process.execPath, [...nodeScript('bin/keys.ts'), 'rotate', 'node', '--retire-after', '3', '--json'], { cwd: ROOT, env: { ...process.env, ...cluster.env } });
    const rotated = JSON.parse(stdout) as { kid: string; activeFrom: string; replaced: { kid: string; retiresAt: string }[] };
    const retiresAt = rotated.replaced[0]!.retiresAt;

    // Sends go on through the switch; the owner signs in with the new key once it is active.
    const owner = cluster.ownerOf(appId, chat.chatId);
    const deadline = Date.now() + 10_000;
    let fresh: string | undefined;
    while (!fresh && Date.now() < deadline) {
      t.equal(await send(notOwner(), ann.jwt), 201, 'forwarded during the rotation');
      const jwt = (await client(owner.url).post('/api/users/signin', { userId: ann.userId }, key.token)).body?.jwt as string | undefined;
      if (jwt && TokenVerifier.kidOf(jwt) === rotated.kid) fresh = jwt;
      if (!fresh) await new Promise((r) => setTimeout(r, 200));
    }
    t.ok(fresh, 'the owner signs with the new key');
    t.equal(await send(notOwner(), fresh!), 201, "the other node verifies the owner's new-key JWT, and forwards");

    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(retiresAt) - Date.now() + 200)));
    t.equal(await send(notOwner(), ann.jwt), 401, 'the old-key JWT is refused after the retirement');
    t.equal(await send(notOwner(), fresh!), 201, 'forwarding goes on over the connection opened with the old key');

    // A restarted node has only the new key live: its connections are new, proved with it.
    const i = cluster.nodes.indexOf(notOwner());
    await cluster.nodes[i]!.process.stop();
    await cluster.startNode(i);
    await cluster.settled();
    t.equal(await send(notOwner(), fresh!), 201, 'after a restart, forwarding over a new connection proved with the new key');
  });
}
