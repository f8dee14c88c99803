import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { ApnsSender, type ApnsCredentials } from '../../node/push/apns.ts';
import { LocalApns } from '../helpers/apns-server.ts';

// Pushes to Apple devices as the nodes will send them (README, "Push notifications"), taken by an
// APNs of the tests' own on loopback HTTP/2 that checks the provider token and the topic.

const p8 = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1', privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } }).privateKey;
const creds: ApnsCredentials = { keyId: 'ABCDE12345', teamId: 'TEAM123456', key: p8(), topic: 'com.example.chat', environment: 'sandbox' };
const apns = await new LocalApns(creds).start();
t.teardown(() => apns.stop());
const sender = new ApnsSender({ origins: { sandbox: apns.origin }, ca: apns.ca });
t.teardown(() => sender.close());
const device = 'ab'.repeat(32);
const note = (body: string) => ({ payload: { aps: { alert: { title: 'ann', body } } }, collapseId: 'chat-1', expiration: Math.floor(Date.now() / 1000) + 3600, priority: 10 as const });

t.test('a notification reaches the device with the topic, the collapse id and a provider token that verifies', async (t) => {
  t.same(await sender.send(creds, device, note('hello')), { status: 200 });
  t.match(apns.received.at(-1), { token: device, collapseId: 'chat-1', priority: '10', payload: { aps: { alert: { title: 'ann', body: 'hello' } } } });
  t.same(await sender.send(creds, device, note('again')), { status: 200 }, 'a second one over the same session');
  t.equal(apns.received.length, 2);
});

t.test('the provider token is kept 50 minutes, then made anew', async (t) => {
  const now = Date.now();
  const first = sender.token(creds, now);
  t.equal(sender.token(creds, now + 49 * 60_000), first, 'the same within 50 minutes (Apple refuses renewals more often than every 20)');
  t.not(sender.token(creds, now + 51 * 60_000), first, 'a new one after');
});

t.test('what APNs refuses reaches the sender with its reason: another key, another topic, a token gone', async (t) => {
  const stranger = new ApnsSender({ origins: { sandbox: apns.origin }, ca: apns.ca });
  t.teardown(() => stranger.close());
  t.same(await stranger.send({ ...creds, key: p8() }, device, note('x')), { status: 403, reason: 'InvalidProviderToken' }, 'signed with another key');
  t.same(await sender.send({ ...creds, topic: 'com.example.other' }, device, note('x')), { status: 400, reason: 'TopicDisallowed' });
  apns.answer = (token) => (token === device ? { status: 410, reason: 'Unregistered' } : { status: 200 });
  t.same(await sender.send(creds, device, note('x')), { status: 410, reason: 'Unregistered' }, 'the token is gone');
  apns.answer = () => ({ status: 200 });
});
