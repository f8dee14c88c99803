import t, { type Test } from 'tap';
import { integration, startService, type Running } from '../helpers/index.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

// README, "Webhooks": at least once. An acknowledged message always yields its message.new, even
// when the receiver is away or the node is killed right after acknowledging it.
const env = { WEBHOOK_ALLOW_INSECURE_URLS: 'true', USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', USER_REQUESTS_PER_SECOND: '100000' };

async function setup(t: Test, svc: Running) {
  const it = await integration(svc, 'durable');
  const receiver = await WebhookReceiver.start();
  t.teardown(() => receiver.stop());
  const created = await it.control.post(`/api/client/apps/${it.appId}/webhooks`, { url: receiver.url, events: ['message.new'] }, it.accessToken);
  receiver.secret = created.body.secret;
  const alice = await it.user('alice');
  const bob = await it.user('bob');
  const chatId = (await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt)).body.chatId as string;
  return { it, receiver, alice, chatId };
}

t.test('a receiver down for 30 s gets every event afterwards: none lost, duplicates only by webhook-id', async (t) => {
  const svc = await startService(env);
  t.teardown(() => svc.stop());
  const { it, receiver, alice, chatId } = await setup(t, svc);
  await receiver.down();
  const downAt = Date.now();
  const sent = new Set<string>();
  for (let i = 0; i < 30; i++) {
    const res = await it.node.post(`/api/messages/${chatId}`, { content: `while down ${i}` }, alice.jwt);
    if (res.status !== 201) t.fail(`a send during the outage answered ${res.status}`);
    sent.add(res.body.message.messageId);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, 30_000 - (Date.now() - downAt))));
  await receiver.up();
  const upAt = Date.now();
  await receiver.until(() => receiver.ofType('message.new').length >= sent.size, 90_000);
  const healedMs = Date.now() - upAt;
  t.same(new Set(receiver.ofType('message.new').map((d) => d.data.messageId)), sent, 'every message, once per webhook-id');
  t.equal(new Set(receiver.attempts.map((a) => a.data.messageId)).size, sent.size, 'no event other than these');
  const idOf = new Map(receiver.ofType('message.new').map((d) => [d.data.messageId, d.id]));
  t.ok(receiver.attempts.every((a) => a.id === idOf.get(a.data.messageId)), `every resend carries its event's webhook-id (${receiver.attempts.length} requests for ${sent.size} events)`);
  t.ok(healedMs < 60_000, `all delivered ${healedMs} ms after the receiver came back (the schedule's step after a 30 s outage is about 32 s)`);
});

t.test('kill -9 right after 200 sends were acknowledged: all 200 message.new are delivered after the restart', async (t) => {
  const svc = await startService(env);
  let restarted: Running | undefined;
  t.teardown(async () => {
    await svc.stop();
    await restarted?.stop();
  });
  const { it, receiver, alice, chatId } = await setup(t, svc);
  // The receiver refuses everything: every event is still waiting when the node dies.
  receiver.answer = () => 503;
  const acked = new Set<string>();
  await Promise.all(
    Array.from({ length: 4 }, async (_, lane) => {
      for (let i = 0; i < 50; i++) {
        const res = await it.node.post(`/api/messages/${chatId}`, { content: `m ${lane}.${i}` }, alice.jwt);
        if (res.status !== 201) throw new Error(res.text);
        acked.add(res.body.message.messageId);
      }
    }),
  );
  await svc.kill();
  t.equal(acked.size, 200, '200 sends acknowledged before the kill');
  t.ok(receiver.ofType('message.new').length === 0, 'none delivered before the kill');
  receiver.answer = () => 200;
  restarted = await startService(env, svc.dataDir);
  await receiver.until(() => receiver.ofType('message.new').length >= 200, 60_000);
  t.same(new Set(receiver.ofType('message.new').map((d) => d.data.messageId)), acked, 'every acknowledged message, after the restart');
  t.equal(receiver.forged, 0);
});
