import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import WebSocket from 'ws';
import { ChatApiError, ManagementClient } from 'chat-service/management';
import { ChatClient, type WebSocketConstructor } from 'chat-service/client';
import { ChatServer } from 'chat-service/server';
import { integration, newAccount, startService } from '../helpers/index.ts';

/**
 * Push providers and devices (README, "Push notifications"): an application's providers set
 * through the management API (checked at set time, secrets never shown again), and a chat user's
 * devices registered on the node for the providers set, at most 10.
 */
const ecKey = (curve = 'prime256v1') => generateKeyPairSync('ec', { namedCurve: curve, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;
const rsaKey = (bits = 2048) => generateKeyPairSync('rsa', { modulusLength: bits, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;
const serviceAccount = (over: Record<string, unknown> = {}) =>
  JSON.stringify({ type: 'service_account', project_id: 'example-chat', private_key_id: 'k1', private_key: rsaKey(), client_email: 'push@example-chat.iam.gserviceaccount.com', token_uri: 'https://oauth2.googleapis.com/token', ...over });
/** A browser's subscription keys: a P-256 point and 16 random bytes. */
const browserKeys = () => {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ format: 'jwk' });
  return { p256dh: Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]).toString('base64url'), auth: Buffer.from('0123456789abcdef').toString('base64url') };
};

t.test('push settings and devices', async (t) => {
  const svc = await startService({ KEY_STATUS_TTL_MS: '1000' });
  t.teardown(() => svc.stop());
  const it = await integration(svc, 'push');
  const base = `/api/client/apps/${it.appId}/push`;
  const ann = await it.user('ann');

  await t.test('providers: set, shown without secrets, refused with the field named', async (t) => {
    t.same((await it.control.get(base, it.accessToken)).body, { privateMode: false }, 'nothing set at first');
    t.equal((await it.node.get('/api/push/web-push-key', ann.jwt)).body.code, 'PUSH_NOT_CONFIGURED', 'no VAPID key before Web Push is set');

    const web = await it.control.put(`${base}/web-push`, { subject: 'mailto:ops@example.com' }, it.accessToken);
    t.equal(web.status, 200, web.text);
    const publicKey = web.body.webPush.publicKey as string;
    const point = Buffer.from(publicKey, 'base64url');
    t.equal(point.length, 65, 'the VAPID public key: an uncompressed P-256 point');
    t.doesNotThrow(() => createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') }, format: 'jwk' }), 'a point on the curve');
    t.notOk(JSON.stringify(web.body).includes('privateKey'), 'the private key is never shown');
    const again = await it.control.put(`${base}/web-push`, { subject: 'https://example.com/contact' }, it.accessToken);
    t.same([again.body.webPush.publicKey, again.body.webPush.subject], [publicKey, 'https://example.com/contact'], 'a second set changes the subject, never the keys');
    t.same((await it.node.get('/api/push/web-push-key', ann.jwt)).body, { publicKey }, 'the node gives a user the key (the change was announced)');
    t.match(await it.control.put(`${base}/web-push`, { subject: 'ops@example.com' }, it.accessToken), { status: 400, body: { code: 'VALIDATION_FAILED', errors: [{ path: '/body/subject' }] } }, 'a subject that is neither mailto: nor https:');

    const apns = { keyId: 'ABCDE12345', teamId: 'TEAM123456', topic: 'com.example.chat', environment: 'sandbox' };
    t.match(await it.control.put(`${base}/apns`, { ...apns, key: 'not a key' }, it.accessToken), { status: 400, body: { code: 'VALIDATION_FAILED', errors: [{ path: '/body/key', message: /PKCS#8 PEM/ }] } }, 'not a PEM key');
    t.match(await it.control.put(`${base}/apns`, { ...apns, key: rsaKey() }, it.accessToken), { status: 400, body: { errors: [{ path: '/body/key', message: /must be an EC key/ }] } }, 'an RSA key');
    t.match(await it.control.put(`${base}/apns`, { ...apns, key: ecKey('secp384r1') }, it.accessToken), { status: 400, body: { errors: [{ path: '/body/key', message: /P-256/ }] } }, 'another curve');
    const cut = (pem: string) => pem.split('\n').filter((_, i) => i !== 2).join('\n');
    t.match(await it.control.put(`${base}/apns`, { ...apns, key: cut(ecKey()) }, it.accessToken), { status: 400, body: { errors: [{ path: '/body/key', message: /not a readable/ }] } }, 'a key with a line cut out');
    t.match(await it.control.put(`${base}/apns`, { ...apns, keyId: 'short', key: ecKey() }, it.accessToken), { status: 400, body: { errors: [{ path: '/body/keyId' }] } }, 'a key id of the wrong form');
    const setApns = await it.control.put(`${base}/apns`, { ...apns, key: ecKey() }, it.accessToken);
    t.equal(setApns.status, 200, setApns.text);
    t.match(setApns.body.apns, { ...apns, updatedAt: String }, 'set');
    t.notOk('key' in setApns.body.apns, 'the .p8 key is never shown');

    const fcm = (text: string) => it.control.put(`${base}/fcm`, { serviceAccount: text }, it.accessToken);
    t.match(await fcm('{not json'), { status: 400, body: { errors: [{ path: '/body/serviceAccount', message: /not JSON/ }] } }, 'not JSON');
    t.match(await fcm(serviceAccount({ type: 'authorized_user' })), { status: 400, body: { errors: [{ path: '/body/serviceAccount/type' }] } }, 'not a service account');
    t.match(await fcm(serviceAccount({ private_key: ecKey() })), { status: 400, body: { errors: [{ path: '/body/serviceAccount/private_key', message: /RSA/ }] } }, 'not an RSA key');
    t.match(await fcm(serviceAccount({ private_key: rsaKey(1024) })), { status: 400, body: { errors: [{ path: '/body/serviceAccount/private_key', message: /2048/ }] } }, 'a short RSA key');
    t.match(await fcm(serviceAccount({ project_id: 'X' })), { status: 400, body: { errors: [{ path: '/body/serviceAccount/project_id' }] } }, 'a malformed project id');
    t.match(await fcm(serviceAccount({ token_uri: 'http://127.0.0.1:9/token' })), { status: 400, body: { errors: [{ path: '/body/serviceAccount/token_uri' }] } }, 'a token URI over http');
    const setFcm = await fcm(serviceAccount());
    t.equal(setFcm.status, 200, setFcm.text);
    t.same(setFcm.body.fcm, { projectId: 'example-chat', clientEmail: 'push@example-chat.iam.gserviceaccount.com', updatedAt: setFcm.body.fcm.updatedAt }, 'set: no private key shown');

    t.equal((await it.control.call('PATCH', base, { body: { privateMode: true }, token: it.accessToken })).body.privateMode, true, 'private mode on');
    t.equal((await it.control.del(`${base}/fcm`, it.accessToken)).status, 204, 'FCM removed');
    t.equal((await it.control.del(`${base}/fcm`, it.accessToken)).body.code, 'PUSH_PROVIDER_NOT_SET', 'once');
    t.equal((await it.control.del(`${base}/nope`, it.accessToken)).status, 404, 'an unknown provider: no such route');
    const other = await integration(svc, 'push-other');
    t.equal((await other.control.get(base, other.accessToken)).body.code, 'APP_NOT_FOUND', "another account cannot read this application's settings");
    t.equal((await other.control.put(`${base}/apns`, { ...apns, key: ecKey() }, other.accessToken)).body.code, 'APP_NOT_FOUND', 'nor set them');
  });

  await t.test('devices: registered for a provider set, the same one once, at most 10, removed; bad ones refused naming the field', async (t) => {
    const endpoint = (n: number) => `https://push.example.net/wpush/v2/${n}`;
    const register = (body: unknown, jwt = ann.jwt) => it.node.post('/api/push/devices', body, jwt);
    const first = await register({ webPush: { endpoint: endpoint(0), keys: browserKeys(), expirationTime: null } });
    t.equal(first.status, 201, first.text);
    t.match(first.body, { deviceId: String, kind: 'webPush', endpoint: endpoint(0), createdAt: String });
    const again = await register({ webPush: { endpoint: endpoint(0), keys: browserKeys() } });
    t.same([again.status, again.body.deviceId], [200, first.body.deviceId], 'the same subscription again: the same device');
    t.equal((await register({ fcm: { token: 'abc:def' } })).body.code, 'PUSH_NOT_CONFIGURED', 'FCM was removed: no FCM device');
    t.equal((await register({ apns: { token: 'ab'.repeat(32) } })).status, 201, 'an APNs token');
    t.match(await register({ webPush: { endpoint: 'http://push.example.net/x/1', keys: browserKeys() } }), { status: 400, body: { errors: [{ path: '/body/webPush/endpoint', message: /https/ }] } }, 'an http endpoint');
    t.match(await register({ webPush: { endpoint: 'https://127.0.0.1/x/1', keys: browserKeys() } }), { status: 400, body: { errors: [{ path: '/body/webPush/endpoint' }] } }, 'a loopback endpoint');
    t.match(await register({ webPush: { endpoint: 'https://10.0.0.8/x/1', keys: browserKeys() } }), { status: 400, body: { errors: [{ path: '/body/webPush/endpoint' }] } }, 'a private address');
    const badPoint = { ...browserKeys(), p256dh: Buffer.alloc(65, 7).toString('base64url') };
    t.match(await register({ webPush: { endpoint: endpoint(1), keys: badPoint } }), { status: 400, body: { errors: [{ path: '/body/webPush/keys/p256dh' }] } }, 'a key that is no uncompressed point');
    t.match(await register({ webPush: { endpoint: endpoint(1), keys: { ...browserKeys(), auth: 'short' } } }), { status: 400, body: { errors: [{ path: '/body/webPush/keys/auth' }] } }, 'a short auth secret');
    t.match(await register({ apns: { token: 'not hex' } }), { status: 400, body: { code: 'VALIDATION_FAILED' } }, 'a token that is not hex');
    t.match(await register({ webPush: { endpoint: endpoint(1), keys: browserKeys() }, apns: { token: 'ab'.repeat(32) } }), { status: 400 }, 'two kinds at once');
    for (let n = 2; n <= 9; n++) t.equal((await register({ webPush: { endpoint: endpoint(n), keys: browserKeys() } })).status, 201, `device ${n + 1}`);
    t.match(await register({ webPush: { endpoint: endpoint(10), keys: browserKeys() } }), { status: 403, body: { code: 'PUSH_DEVICE_LIMIT_REACHED' } }, 'an eleventh: refused');
    const listed = await it.node.get('/api/push/devices', ann.jwt);
    t.equal(listed.body.devices.length, 10, 'ten listed');
    t.equal(listed.body.devices[0].deviceId, first.body.deviceId, 'oldest first');
    t.equal((await it.node.del(`/api/push/devices/${first.body.deviceId}`, ann.jwt)).status, 204, 'removed');
    t.equal((await it.node.del(`/api/push/devices/${first.body.deviceId}`, ann.jwt)).body.code, 'PUSH_DEVICE_NOT_FOUND', 'once');
    const bob = await it.user('bob');
    t.equal((await it.node.del(`/api/push/devices/${listed.body.devices[1].deviceId}`, bob.jwt)).body.code, 'PUSH_DEVICE_NOT_FOUND', "bob cannot remove ann's");
    t.equal((await register({ webPush: { endpoint: endpoint(2), keys: browserKeys() } }, bob.jwt)).status, 201, "bob's browser takes a subscription ann had");
    t.equal((await it.node.get('/api/push/devices', ann.jwt)).body.devices.length, 8, 'it is no longer ann’s');
    t.equal((await it.node.get('/api/push/devices')).status, 401, 'no JWT');
  });

  await t.test('the SDK: ManagementClient sets providers; ChatClient.push gets the key and registers, lists and removes devices', async (t) => {
    const mgmt = new ManagementClient({ baseUrl: svc.controlUrl });
    await mgmt.register(newAccount('sdk-push'));
    const app = await mgmt.getApplication((await mgmt.createApplication('SDK push')).id);
    t.same(await mgmt.getPushSettings(app.id), { privateMode: false });
    const { webPush } = await mgmt.setWebPush(app.id, 'mailto:ops@example.com');
    t.equal(Buffer.from(webPush!.publicKey, 'base64url').length, 65);
    t.match(await mgmt.setApns(app.id, { keyId: 'ABCDE12345', teamId: 'TEAM123456', key: ecKey(), topic: 'com.example.chat', environment: 'production' }), { apns: { environment: 'production' } });
    t.match(await mgmt.setFcm(app.id, serviceAccount()), { fcm: { projectId: 'example-chat' } });
    t.match(await mgmt.setPushOptions(app.id, { privateMode: true }), { privateMode: true });
    await mgmt.removePushProvider(app.id, 'fcm');
    const refused = await mgmt.setFcm(app.id, '{}').catch((e: unknown) => e);
    t.ok(refused instanceof ChatApiError && refused.code === 'VALIDATION_FAILED', 'a malformed service account: VALIDATION_FAILED');

    const server = new ChatServer({ baseUrl: app.clusterEndpoint!, apiKey: (await mgmt.createApiKey(app.id)).token });
    const user = new ChatClient({ baseUrl: app.clusterEndpoint!, WebSocket: WebSocket as unknown as WebSocketConstructor });
    await server.registerUser({ username: 'dan' });
    user.setAuth(await server.signIn({ username: 'dan' }));
    t.equal(await user.push.webPushKey(), webPush!.publicKey, 'the key to subscribe with');
    // What a browser's PushSubscription gives: an object with toJSON().
    const subscription = { toJSON: () => ({ endpoint: 'https://push.example.net/wpush/v2/sdk', expirationTime: null, keys: browserKeys() }) };
    const device = await user.push.register(subscription);
    t.match(device, { kind: 'webPush', endpoint: 'https://push.example.net/wpush/v2/sdk' });
    const phone = await user.push.register({ apns: 'cd'.repeat(32) });
    t.same((await user.push.devices()).map((d) => d.deviceId), [device.deviceId, phone.deviceId]);
    await user.push.unregister(device.deviceId);
    t.same((await user.push.devices()).map((d) => d.deviceId), [phone.deviceId]);
    const again = await user.registerPush({ apns: 'ef'.repeat(32) });
    t.same((await user.push.devices()).map((d) => d.deviceId), [phone.deviceId, again.deviceId], 'registerPush: the same call');
    await user.unregisterPush(again.deviceId);
    t.same((await user.push.devices()).map((d) => d.deviceId), [phone.deviceId], 'unregisterPush');
    const gone = await user.push.register({ fcm: 'token' }).catch((e: unknown) => e);
    t.ok(gone instanceof Error && (gone as { code?: string }).code === 'PUSH_NOT_CONFIGURED', 'FCM removed: PUSH_NOT_CONFIGURED');
    const chat = await user.createGroup('quiet', []);
    t.equal(await user.push.chatMuted(chat.chatId), false, 'pushes of a chat are on at first');
    t.same(await user.push.muteChat(chat.chatId, true), { chatId: chat.chatId, muted: true });
    t.equal(await user.push.chatMuted(chat.chatId), true, 'muted');
    const stranger = await user.push.muteChat('00000000-0000-4000-8000-000000000000', true).catch((e: unknown) => e);
    t.ok(stranger instanceof ChatApiError && stranger.code === 'CHAT_NOT_FOUND', 'a chat the user is not in: CHAT_NOT_FOUND');
  });
});
