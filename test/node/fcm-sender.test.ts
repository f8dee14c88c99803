import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { FcmSender, type FcmCredentials } from '../../node/push/fcm.ts';
import { LocalFcm } from '../helpers/fcm-server.ts';

// Pushes through FCM's HTTP v1 API as the nodes will send them (README, "Push notifications"),
// taken by an FCM and a token endpoint of the tests' own on loopback HTTPS.

const rsa = () => generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;
const account = { projectId: 'example-chat', clientEmail: 'push@example-chat.iam.gserviceaccount.com', privateKey: rsa() };
const fcm = await new LocalFcm(account).start();
t.teardown(() => fcm.stop());
const creds: FcmCredentials = { ...account, privateKeyId: 'k1', tokenUri: `${fcm.origin}/token` };
const sender = new FcmSender({ origin: fcm.origin, ca: fcm.ca });
t.teardown(() => sender.close());
const note = (body: string) => ({ data: { chatId: 'c1', messageId: 'm1' }, notification: { title: 'ann', body }, collapseKey: 'c1', ttlSeconds: 3600, priority: 'high' as const });

t.test('an access token got with a signed assertion, kept, and messages sent with the collapse key', async (t) => {
  t.same(await sender.send(creds, 'device-token-1', note('hello')), { status: 200 });
  t.same(await sender.send(creds, 'device-token-1', note('again')), { status: 200 });
  t.equal(fcm.exchanges, 1, 'one token exchange for both');
  t.match(fcm.received.at(-1), { projectId: 'example-chat', message: { token: 'device-token-1', data: { chatId: 'c1' }, notification: { body: 'again' }, android: { collapse_key: 'c1', ttl: '3600s', priority: 'HIGH' } } });
});

t.test('what FCM refuses reaches the sender with its code: another key, a token gone, unavailable', async (t) => {
  const stranger = new FcmSender({ origin: fcm.origin, ca: fcm.ca });
  t.teardown(() => stranger.close());
  t.match(await stranger.send({ ...creds, privateKey: rsa() }, 'device-token-1', note('x')), { status: 400, errorCode: 'invalid_grant' }, 'an assertion signed with another key');
  fcm.answer = (token) => (token === 'gone' ? 404 : 503);
  t.same(await sender.send(creds, 'gone', note('x')), { status: 404, errorCode: 'UNREGISTERED' }, 'the token is gone');
  t.same(await sender.send(creds, 'device-token-1', note('x')), { status: 503, errorCode: 'UNAVAILABLE' }, 'try later');
  fcm.answer = () => 200;
});
