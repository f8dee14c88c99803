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

t.test('kill -9 right after chat, member and user changes were acknowledged: each one\'s event is delivered after the restart', async (t) => {
  const svc = await startService(env);
  let restarted: Running | undefined;
  t.teardown(async () => {
    await svc.stop();
    await restarted?.stop();
  });
  const it = await integration(svc, 'durable-changes');
  const receiver = await WebhookReceiver.start();
  t.teardown(() => receiver.stop());
  const events = ['user.created', 'user.deleted', 'chat.created', 'chat.updated', 'chat.deleted', 'member.added', 'member.removed'];
  const created = await it.control.post(`/api/client/apps/${it.appId}/webhooks`, { url: receiver.url, events }, it.accessToken);
  receiver.secret = created.body.secret;
  receiver.answer = () => 503;
  const alice = await it.user('alice');
  const bob = await it.user('bob');
  const carol = await it.user('carol');
  const ok = (res: { status: number; text: string }, want: number) => {
    if (res.status !== want) throw new Error(`${res.status} ${res.text}`);
  };
  const group = (await it.node.post('/api/chats', { type: 'group', name: 'Kept', memberIds: [] }, alice.jwt)).body.chatId as string;
  ok(await it.node.post(`/api/chats/${group}/members`, { userIds: [bob.userId] }, alice.jwt), 200);
  // Added, then removed: what the member.added event reports is undone before the kill.
  ok(await it.node.del(`/api/chats/${group}/members/${bob.userId}`, alice.jwt), 204);
  ok(await it.node.put(`/api/chats/${group}`, { name: 'Renamed' }, alice.jwt), 200);
  const gone = (await it.node.post('/api/chats', { type: 'group', name: 'Gone', memberIds: [] }, alice.jwt)).body.chatId as string;
  ok(await it.node.del(`/api/chats/${gone}`, alice.jwt), 204);
  ok(await it.node.del(`/api/users/${carol.userId}`, it.apiKey), 204);
  await svc.kill();
  t.equal(events.reduce((n, type) => n + receiver.ofType(type).length, 0), 0, 'none delivered before the kill');
  receiver.answer = () => 200;
  restarted = await startService(env, svc.dataDir);
  const want = ['user.created:3', 'chat.created:2', 'member.added:1', 'member.removed:1', 'chat.updated:1', 'chat.deleted:1', 'user.deleted:1'];
  const count = (type: string) => new Set(receiver.ofType(type).map((d) => d.id)).size;
  await receiver.until(() => want.every((w) => count(w.split(':')[0]!) >= Number(w.split(':')[1])), 60_000);
  t.same(want.map((w) => `${w.split(':')[0]}:${count(w.split(':')[0]!)}`), want, 'every acknowledged change has its event, once per webhook-id');
  t.same(new Set(receiver.ofType('user.created').map((d) => d.data.userId)), new Set([alice.userId, bob.userId, carol.userId]), 'user.created of each user');
  t.same(receiver.ofType('member.added').map((d) => [d.data.chatId, d.data.userId]), [[group, bob.userId]], 'member.added although bob has left since');
  t.same(new Set(receiver.ofType('chat.created').map((d) => d.data.chatId)), new Set([group, gone]), 'chat.created of both chats, the deleted one too');
  t.equal(receiver.forged, 0);
});
