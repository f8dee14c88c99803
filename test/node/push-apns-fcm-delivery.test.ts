import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { integration, startService, type Running } from '../helpers/index.ts';
import { client } from '../helpers/http.ts';
import { LocalApns } from '../helpers/apns-server.ts';
import { LocalFcm } from '../helpers/fcm-server.ts';
import { eventually, pushPeersEnv } from '../helpers/push-peers.ts';

/**
 * APNs and FCM pushes of new messages (README, "Push notifications"), end to end against the
 * tests' own APNs (HTTP/2, checking the provider token and topic) and FCM (checking the OAuth
 * token got with the service account's assertion): a collapse id per chat, a retry after 503,
 * a token the service says is gone removed, and pushes pending at a kill -9 delivered after the
 * restart, each once.
 */
const pem = (type: 'ec' | 'rsa') =>
  (type === 'ec'
    ? generateKeyPairSync('ec', { namedCurve: 'prime256v1', privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } })
    : generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } })
  ).privateKey;

t.test('APNs and FCM: collapse per chat, retry after 503, gone tokens removed, none lost or doubled across a kill -9', async (t) => {
  const apnsApp = { keyId: 'ABCDE12345', teamId: 'TEAM123456', key: pem('ec'), topic: 'com.example.chat' };
  const account = { projectId: 'example-chat', clientEmail: 'push@example-chat.iam.gserviceaccount.com', privateKey: pem('rsa') };
  const apns = await new LocalApns(apnsApp).start();
  const fcm = await new LocalFcm(account).start();
  t.teardown(async () => {
    await apns.stop();
    await fcm.stop();
  });
  const env = { ...pushPeersEnv({ apns, fcm }), KEY_STATUS_TTL_MS: '1000' };
  let svc: Running = await startService(env);
  t.teardown(() => svc.stop());
  const it = await integration(svc, 'mobile');
  const base = `/api/client/apps/${it.appId}/push`;
  t.equal((await it.control.put(`${base}/apns`, { ...apnsApp, environment: 'production' }, it.accessToken)).status, 200);
  const serviceAccount = JSON.stringify({ type: 'service_account', project_id: account.projectId, private_key_id: 'k1', private_key: account.privateKey, client_email: account.clientEmail, token_uri: `${fcm.origin}/token` });
  const setFcm = await it.control.put(`${base}/fcm`, { serviceAccount }, it.accessToken);
  t.equal(setFcm.status, 200, setFcm.text);

  const alice = await it.user('alice');
  const bob = await it.user('bob');
  const apnsToken = 'ab'.repeat(32);
  const fcmToken = 'fcm-token-of-bob';
  t.equal((await it.node.post('/api/push/devices', { apns: { token: apnsToken } }, bob.jwt)).status, 201);
  t.equal((await it.node.post('/api/push/devices', { fcm: { token: fcmToken } }, bob.jwt)).status, 201);
  const chatId = (await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt)).body.chatId as string;
  let node = it.node;
  const send = async (content: string, chat = chatId) => {
    const res = await node.post(`/api/messages/${chat}`, { content }, alice.jwt);
    if (res.status !== 201) throw new Error(res.text);
    return res.body.message.messageId as string;
  };
  const collapse = chatId.replaceAll('-', '');

  await t.test('one push each, with the chat as collapse id, after a 503 from each', async (t) => {
    let apnsCalls = 0;
    let fcmCalls = 0;
    apns.answer = () => (++apnsCalls === 1 ? { status: 503, reason: 'ServiceUnavailable' } : { status: 200 });
    fcm.answer = () => (++fcmCalls === 1 ? 503 : 200);
    const messageId = await send('hello from alice');
    await eventually(() => apns.received.length === 1 && fcm.received.length === 1, 10_000, 'one push at each after a retry');
    t.equal(apnsCalls, 2, 'APNs: a 503, then the retry');
    t.equal(fcmCalls, 2, 'FCM: a 503, then the retry');
    const a = apns.received[0]!;
    t.equal(a.token, apnsToken);
    t.equal(a.collapseId, collapse, 'apns-collapse-id: the chat');
    t.equal(a.priority, '10');
    t.ok(Number(a.expiration) > Date.now() / 1000 + 3 * 3600, 'apns-expiration: hours ahead');
    t.match(a.payload, { aps: { alert: { title: alice.username, body: 'hello from alice' }, 'thread-id': chatId }, chat: { chatId, messageId, senderId: alice.userId } });
    const f = fcm.received[0]!;
    t.equal(f.message.token, fcmToken);
    t.match(f.message, { notification: { title: alice.username, body: 'hello from alice' }, data: { chatId, messageId, text: 'hello from alice' }, android: { collapse_key: collapse, priority: 'HIGH' } });
    t.ok(Object.values(f.message.data ?? {}).every((v) => typeof v === 'string'), "FCM data: strings only, as FCM requires");
    apns.answer = () => ({ status: 200 });
    fcm.answer = () => 200;
    const more = [await send('two'), await send('three')];
    await eventually(() => apns.received.length === 3 && fcm.received.length === 3, 5_000, 'two more');
    t.same(new Set(apns.received.map((r) => r.collapseId)), new Set([collapse]), 'one collapse id for the chat');
    t.same(fcm.received.slice(1).map((r) => r.message.data?.messageId), more);
  });

  await t.test('pushes pending at a kill -9 are delivered after the restart: none lost, none doubled', async (t) => {
    // Five chats, one message each: pushes of one chat collapse to its newest (README), which would hide a lost one.
    const chats: string[] = [];
    for (let i = 0; i < 5; i++) chats.push((await it.node.post('/api/chats', { type: 'group', name: `pending ${i}`, memberIds: [bob.userId] }, alice.jwt)).body.chatId as string);
    apns.answer = () => ({ status: 503, reason: 'ServiceUnavailable' });
    fcm.answer = () => 503;
    // Progress is written every second: what was pushed before that is never pushed again.
    await new Promise((r) => setTimeout(r, 1_500));
    const [apnsBefore, fcmBefore] = [apns.received.length, fcm.received.length];
    const pending: string[] = [];
    for (let i = 0; i < 5; i++) pending.push(await send(`pending ${i}`, chats[i]));
    // Each was tried and refused at least once: pending in the outbox, waiting for a retry.
    await eventually(() => apns.refused.length >= 5 && fcm.refused.length >= 5, 10_000, 'first attempts refused');
    await svc.kill();
    apns.answer = () => ({ status: 200 });
    fcm.answer = () => 200;
    svc = await startService(env, svc.dataDir);
    node = client(svc.nodeUrl);
    await eventually(() => apns.received.length >= apnsBefore + 5 && fcm.received.length >= fcmBefore + 5, 20_000, 'the five pending pushes at each after the restart');
    await new Promise((r) => setTimeout(r, 2_000));
    const ids = (list: { data?: unknown }[]) => list.map((d) => (d.data as { messageId: string }).messageId).sort();
    t.same(ids(apns.received.slice(apnsBefore).map((r) => ({ data: r.payload.chat }))), [...pending].sort(), 'APNs: each pending message once');
    t.same(ids(fcm.received.slice(fcmBefore).map((r) => ({ data: r.message.data }))), [...pending].sort(), 'FCM: each pending message once');
  });

  await t.test('a token the service says is gone is removed (APNs 410 Unregistered, FCM 404 UNREGISTERED)', async (t) => {
    apns.answer = () => ({ status: 410, reason: 'Unregistered' });
    fcm.answer = () => 404;
    await send('anyone?');
    await eventually(async () => (await node.get('/api/push/devices', bob.jwt)).body.devices.length === 0, 10_000, "bob's two devices removed");
    t.pass('both removed');
  });
});
