import t from 'tap';
import { client } from '../helpers/index.ts';
import { clusterApp, clusterBackends, startCluster } from '../helpers/cluster.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

// README, "Webhooks": each node keeps an outbox of the events its writes make; when a node dies,
// another adopts its outbox, so what it acknowledged is still delivered.
const backends = await clusterBackends(t);

if (backends) {
  t.test('kill -9 of the node that acknowledged 200 sends: another node delivers all 200 message.new', async (t) => {
    const cluster = await startCluster({ size: 2, ...backends, env: { WEBHOOK_ALLOW_INSECURE_URLS: 'true', USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', USER_REQUESTS_PER_SECOND: '100000' } });
    t.teardown(() => cluster.stop());
    const { appId, mgmtToken, users } = await clusterApp(cluster, ['ann', 'ben']);
    const receiver = await WebhookReceiver.start();
    t.teardown(() => receiver.stop());
    const created = await client(cluster.control.controlUrl).post(`/api/client/apps/${appId}/webhooks`, { url: receiver.url, events: ['message.new'] }, mgmtToken);
    t.equal(created.status, 201);
    receiver.secret = created.body.secret;
    const [ann, ben] = users as [(typeof users)[0], (typeof users)[0]];
    const chatId = (await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'direct', userId: ben.userId }, ann.jwt)).body.chatId as string;
    const victim = cluster.ownerOf(appId, chatId);
    const survivor = cluster.nodes.find((n) => n !== victim)!;
    // Every event waits: the receiver refuses all until the victim is dead.
    receiver.answer = () => 503;
    const api = client(victim.url);
    const acked = new Set<string>();
    await Promise.all(
      Array.from({ length: 4 }, async (_, lane) => {
        for (let i = 0; i < 50; i++) {
          const res = await api.post(`/api/messages/${chatId}`, { content: `m ${lane}.${i}` }, ann.jwt);
          if (res.status !== 201) throw new Error(`send answered ${res.status}: ${res.text}`);
          acked.add(res.body.message.messageId);
        }
      }),
    );
    await victim.process.kill();
    t.equal(acked.size, 200, '200 sends acknowledged by the chat owner, then it was killed');
    t.equal(receiver.ofType('message.new').length, 0, 'none delivered before the kill');
    receiver.answer = () => 200;
    await receiver.until(() => receiver.ofType('message.new').length >= 200, 60_000);
    t.same(new Set(receiver.ofType('message.new').map((d) => d.data.messageId)), acked, 'every acknowledged message, delivered by the survivor');
    t.equal(receiver.forged, 0);
    t.match(survivor.process.output(), /adopting the webhook outbox of a node that is gone/, 'the surviving node adopted the outbox');
  });
}
