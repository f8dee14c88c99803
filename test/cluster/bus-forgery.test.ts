import t from 'tap';
import { client, WsClient } from '../helpers/index.ts';
import { clusterApp, clusterBackends, startCluster } from '../helpers/cluster.ts';
import { RedisBus } from '../../node/bus/index.ts';
import { encodeWire } from '../../node/cluster/wire.ts';
import { recordingLog } from '../node/bus-helpers.ts';

// README, Security: what arrives over Redis cannot widen a user's access. A publisher that is no
// node (anything that reaches Redis) announces a membership the store does not hold, and a user
// deletion that did not happen: the nodes check their own state and ignore both.
const backends = await clusterBackends(t);
if (backends) {
  const { redisUrl } = backends;
  const cluster = await startCluster({ size: 2, ...backends });
  t.teardown(() => cluster.stop());

  t.test('a forged membership does not subscribe a socket, and a forged deletion closes nothing', async (t) => {
    const { appId, users } = await clusterApp(cluster, ['ann', 'ben', 'eve']);
    const [ann, ben, eve] = users as [(typeof users)[0], (typeof users)[0], (typeof users)[0]];
    const chatId = (await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'group', name: 'private', memberIds: [ben.userId] }, ann.jwt)).body.chatId as string;
    const [annWs, benWs, eveWs] = await Promise.all([WsClient.connect(cluster.nodes[0]!.url, ann.jwt), WsClient.connect(cluster.nodes[1]!.url, ben.jwt), WsClient.connect(cluster.nodes[1]!.url, eve.jwt)]);
    t.teardown(() => Promise.all([annWs.close(), benWs.close(), eveWs.close()]));

    const forger = await RedisBus.connect({ url: redisUrl, nodeId: 'forger', prefix: `${cluster.env.CLUSTER_NAME}:`, log: recordingLog() });
    t.teardown(() => forger.close());
    forger.publish({ kind: 'user', appId, userId: eve.userId }, encodeWire({ t: 'm', chatId, member: true }));
    forger.publish({ kind: 'user', appId, userId: ben.userId }, encodeWire({ t: 'x' }));
    await forger.ready();
    // Handed to Redis; what the node does with them is not observable from outside (that is the
    // point), so give its checks time to finish before the chat's next message.
    await new Promise((resolve) => setTimeout(resolve, 500));

    t.equal((await annWs.request({ type: 'message.send', chatId, content: 'for members only' })).type, 'ack');
    await benWs.waitFor((f) => f.type === 'message.new' && f.chatId === chatId, 5000);
    t.pass('the member on the same node as eve gets the message: it was delivered there');
    // An answer on eve's socket comes after anything the node wrote to it before.
    t.equal((await eveWs.request({ type: 'typing.start', chatId })).type, 'error', 'eve may not even type there');
    t.notOk(eveWs.frames.some((f) => f.type === 'message.new' && f.chatId === chatId), 'eve, not a member, got nothing of the chat');
    t.notOk(benWs.closed, "ben's socket is still open after the forged deletion");
  });
}
