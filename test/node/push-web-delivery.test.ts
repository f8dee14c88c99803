import t from 'tap';
import { integration, startService } from '../helpers/index.ts';
import { LocalPushService, type BrowserSubscription } from '../helpers/push-service.ts';
import { eventually, pushPeersEnv } from '../helpers/push-peers.ts';
import { WsClient } from '../helpers/ws.ts';

/**
 * Web Push of new messages (README, "Push notifications"), end to end against the tests' own RFC
 * 8030 push service, which checks the VAPID JWT and decrypts each payload with the subscription's
 * keys: to members with no live connection only, never to a member who muted the chat, blocked
 * the sender or is banned; one topic per chat; ids only in private mode; a subscription the
 * service says is gone is removed.
 */
t.test('Web Push: who gets a push, what it carries, and a gone subscription', async (t) => {
  const pushService = await new LocalPushService().start();
  t.teardown(() => pushService.stop());
  const svc = await startService({ ...pushPeersEnv({ webPush: pushService }), KEY_STATUS_TTL_MS: '1000' });
  t.teardown(() => svc.stop());
  const it = await integration(svc, 'webpush');
  const set = await it.control.put(`/api/client/apps/${it.appId}/push/web-push`, { subject: 'mailto:ops@example.com' }, it.accessToken);
  t.equal(set.status, 200, set.text);
  const vapidKey = set.body.webPush.publicKey as string;

  const [alice, bob, carol, dave, erin, frank] = [await it.user('alice'), await it.user('bob'), await it.user('carol'), await it.user('dave'), await it.user('erin'), await it.user('frank')];
  const subs = new Map<string, BrowserSubscription>();
  for (const u of [alice, bob, carol, dave, erin, frank]) {
    const sub = pushService.subscribe();
    subs.set(u.userId, sub);
    const reg = await it.node.post('/api/push/devices', { webPush: { endpoint: sub.endpoint, keys: sub.keys } }, u.jwt);
    t.equal(reg.status, 201, reg.text);
  }
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'Team', memberIds: [bob, carol, dave, erin, frank].map((u) => u.userId) }, alice.jwt)).body.chatId as string;
  t.ok(chatId, 'a group of six');
  const carolSocket = await WsClient.connect(svc.nodeUrl, carol.jwt);
  t.equal((await it.node.put(`/api/push/chats/${chatId}`, { muted: true }, dave.jwt)).body.muted, true, 'dave mutes the chat');
  t.equal((await it.node.post('/api/users/me/blocks', { userId: alice.userId }, erin.jwt)).status, 201, 'erin blocks alice');
  t.equal((await it.node.post('/api/moderation/bans', { userId: frank.userId, reason: 'spam' }, it.apiKey)).status, 201, 'frank is banned');
  const pushesTo = (userId: string) => pushService.received.filter((p) => p.subscriptionId === subs.get(userId)!.id);

  await t.test('a message reaches the one member with no socket who wants it, within 1 s, signed and encrypted', async (t) => {
    const sent = await it.node.post(`/api/messages/${chatId}`, { content: 'Lunch at noon, @bob?', mentions: [bob.userId] }, alice.jwt);
    t.equal(sent.status, 201, sent.text);
    const sentAt = Date.now();
    await pushService.until((r) => r.some((p) => p.subscriptionId === subs.get(bob.userId)!.id), 5_000);
    const push = pushesTo(bob.userId)[0]!;
    t.ok(push.at - sentAt < 1_000, `at the push service ${push.at - sentAt} ms after the send was acknowledged`);
    t.equal(push.publicKey, vapidKey, "signed with the application's VAPID key");
    t.equal(push.claims.aud, pushService.origin, "aud: the push service's origin");
    t.equal(push.claims.sub, 'mailto:ops@example.com');
    t.same(JSON.parse(push.payload), {
      type: 'message.new',
      chatId,
      messageId: sent.body.message.messageId,
      seq: String(sent.body.message.seq),
      senderId: alice.userId,
      mentioned: 'true',
      senderName: alice.username,
      chatName: 'Team',
      text: 'Lunch at noon, @bob?',
    }, 'the payload decrypts to the message');
    t.equal(push.topic, chatId.replaceAll('-', ''), "the chat's topic");
    t.equal(push.urgency, 'high', 'a mention is urgent');
    t.ok(push.ttl > 3 * 3600 && push.ttl <= 4 * 3600, `TTL ${push.ttl} s`);
    await new Promise((r) => setTimeout(r, 1_500));
    t.same(pushesTo(carol.userId), [], 'carol has a socket open: nothing pushed');
    t.same(pushesTo(dave.userId), [], 'dave muted the chat: nothing pushed');
    t.same(pushesTo(erin.userId), [], 'erin blocked the sender: nothing pushed');
    t.same(pushesTo(frank.userId), [], 'frank is banned: nothing pushed');
    t.same(pushesTo(alice.userId), [], 'not to the sender');
    t.same(pushService.refused, [], 'the push service refused nothing');
  });

  await t.test('20 messages in a busy chat: one topic, collapsed to a push a second, the newest last, a mention kept; unmuting and closing a socket turn pushes on', async (t) => {
    t.equal((await it.node.put(`/api/push/chats/${chatId}`, { muted: false }, dave.jwt)).body.muted, false, 'dave unmutes');
    t.same((await it.node.get(`/api/push/chats/${chatId}`, dave.jwt)).body, { chatId, muted: false });
    await carolSocket.close();
    await new Promise((r) => setTimeout(r, 1_300));
    const before = pushService.received.length;
    for (let i = 0; i < 20; i++) {
      const body = i === 5 ? { content: 'busy 5, @bob', mentions: [bob.userId] } : { content: `busy ${i}` };
      t.equal((await it.node.post(`/api/messages/${chatId}`, body, alice.jwt)).status, 201);
    }
    const text = (p: { payload: string }) => (JSON.parse(p.payload) as { text: string }).text;
    const busyTo = (userId: string) => pushService.received.slice(before).filter((p) => p.subscriptionId === subs.get(userId)!.id);
    const index = (p: { payload: string }) => Number(text(p).match(/^busy (\d+)/)![1]);
    const people = { bob, 'carol, now offline': carol, 'dave, unmuted': dave };
    await pushService.until(() => Object.values(people).every((u) => busyTo(u.userId).at(-1) && text(busyTo(u.userId).at(-1)!) === 'busy 19'), 10_000);
    await new Promise((r) => setTimeout(r, 1_500));
    for (const [who, user] of Object.entries(people)) {
      const pushes = busyTo(user.userId);
      const order = pushes.map(index);
      t.equal(order.at(-1), 19, `${who}: the newest message last`);
      t.ok(order.length >= 1 && order.length < 20, `${who}: ${order.length} pushes for 20 messages (${order.join(', ')})`);
      t.ok(order.every((n, i) => i === 0 || n > order[i - 1]!), `${who}: in the order sent, none twice`);
      const gaps = pushes.slice(1).map((p, i) => p.at - pushes[i]!.at);
      // Starts are a second apart; arrivals vary by each push's own time on the way (the first opens the connection).
      t.ok(gaps.every((ms) => ms >= 500), `${who}: about a second apart (${gaps.join(', ')} ms)`);
    }
    const bobs = busyTo(bob.userId);
    t.ok(bobs.filter((p) => index(p) >= 5).some((p) => JSON.parse(p.payload).mentioned === 'true' && p.urgency === 'high'), 'bob was mentioned in a message his push stands for: mentioned, and urgent');
    t.same([...busyTo(carol.userId), ...busyTo(dave.userId)].map((p) => p.urgency).filter((u) => u !== 'normal'), [], 'not mentioned: normal urgency');
    t.same([...new Set(pushService.received.slice(before).map((p) => p.topic))], [chatId.replaceAll('-', '')], 'every one with the same topic: the browser shows one notification');
  });

  await t.test('private mode: ids only', async (t) => {
    t.equal((await it.control.patch(`/api/client/apps/${it.appId}/push`, { privateMode: true }, it.accessToken)).status, 200);
    await new Promise((r) => setTimeout(r, 1_200));
    const before = pushesTo(bob.userId).length;
    const sent = await it.node.post(`/api/messages/${chatId}`, { content: 'a secret' }, alice.jwt);
    await pushService.until(() => pushesTo(bob.userId).length > before, 5_000);
    t.same(JSON.parse(pushesTo(bob.userId).at(-1)!.payload), { type: 'message.new', chatId, messageId: sent.body.message.messageId, seq: String(sent.body.message.seq), senderId: alice.userId, mentioned: 'false' }, 'no text, no names');
    t.notOk(pushService.received.some((p) => p.payload.includes('a secret')), 'the text reached no push service');
  });

  await t.test('a subscription the push service says is gone (410) is removed', async (t) => {
    const gone = subs.get(bob.userId)!.id;
    pushService.answer = (id) => (id === gone ? 410 : 201);
    t.equal((await it.node.get('/api/push/devices', bob.jwt)).body.devices.length, 1);
    t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'are you there?' }, alice.jwt)).status, 201);
    await eventually(async () => (await it.node.get('/api/push/devices', bob.jwt)).body.devices.length === 0, 5_000, "bob's subscription removed");
    t.pass('removed after the 410');
    pushService.answer = () => 201;
    const before = pushService.received.length;
    t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'and now?' }, alice.jwt)).status, 201);
    await pushService.until((r) => r.length >= before + 2, 5_000); // carol and dave
    await new Promise((r) => setTimeout(r, 500));
    t.equal(pushService.received.slice(before).filter((p) => p.subscriptionId === gone).length, 0, 'nothing more is pushed to it');
  });
});
