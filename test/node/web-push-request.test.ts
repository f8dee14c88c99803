import t from 'tap';
import { Agent, fetch } from 'undici';
import { newVapidKeys } from '../../common/push/index.ts';
import { chatTopic, webPushRequest } from '../../node/push/web-push-request.ts';
import { LocalPushService } from '../helpers/push-service.ts';

// A Web Push request as the nodes will send it (README, "Push notifications"), taken by a push
// service of RFC 8030 on loopback that checks the VAPID JWT (RFC 8292) and decrypts the payload
// with the subscription's keys (RFC 8291), as browsers' push services do.

const service = await new LocalPushService().start();
t.teardown(() => service.stop());
const dispatcher = new Agent({ connect: { ca: service.ca } });
t.teardown(() => dispatcher.close());
const send = (r: { url: string; headers: Record<string, string>; body: Buffer }) => fetch(r.url, { method: 'POST', headers: r.headers, body: new Uint8Array(r.body), dispatcher });
const vapid = { subject: 'mailto:ops@example.com', ...newVapidKeys() };
const chatId = '0f8fad5b-d9cb-469f-a165-70867728950e';

t.test('the payload decrypts to what was sent, the JWT verifies with the application’s key, for this origin, within 24 hours', async (t) => {
  const sub = service.subscribe();
  const address = { kind: 'webPush' as const, endpoint: sub.endpoint, p256dh: sub.keys.p256dh, auth: sub.keys.auth };
  const payload = JSON.stringify({ chatId, messageId: 'm1', text: 'Crème brûlée? 🍮' });
  const res = await send(webPushRequest(address, vapid, { payload, ttlSeconds: 3600, urgency: 'high', topic: chatTopic(chatId) }));
  t.equal(res.status, 201, await res.text());
  const got = service.received.at(-1)!;
  t.equal(got.payload, payload, 'decrypted with the subscription’s keys');
  t.equal(got.publicKey, vapid.publicKey, 'k: the application’s VAPID public key');
  t.equal(got.claims.aud, service.origin, 'aud: the push service’s origin');
  t.equal(got.claims.sub, vapid.subject);
  const now = Date.now() / 1000;
  t.ok(got.claims.exp > now + 3600 && got.claims.exp <= now + 24 * 3600, 'exp: hours ahead, within a day');
  t.same([got.ttl, got.urgency, got.topic], [3600, 'high', '0f8fad5bd9cb469fa16570867728950e'], 'TTL, Urgency, and the chat’s Topic (32 characters)');
});

t.test('the service refuses what it cannot check: another key’s JWT, another subscription’s keys; and its 410 reaches the sender', async (t) => {
  const sub = service.subscribe();
  const address = { kind: 'webPush' as const, endpoint: sub.endpoint, p256dh: sub.keys.p256dh, auth: sub.keys.auth };
  const request = webPushRequest(address, vapid, { payload: 'x', ttlSeconds: 60, urgency: 'normal' });
  // The JWT signed by one key, presented with another's public key.
  const other = newVapidKeys();
  const forged = { ...request, headers: { ...request.headers, authorization: request.headers.authorization!.replace(/k=.*$/, `k=${other.publicKey}`) } };
  t.equal((await send(forged)).status, 403, 'a JWT that does not verify with k');
  t.match(service.refused.at(-1), { status: 403, reason: /does not verify/ });
  const stranger = service.subscribe();
  const misaddressed = webPushRequest({ ...address, p256dh: stranger.keys.p256dh, auth: stranger.keys.auth }, vapid, { payload: 'x', ttlSeconds: 60, urgency: 'normal' });
  t.equal((await send(misaddressed)).status, 400, 'encrypted for other keys: not decryptable');
  service.answer = (id) => (id === sub.id ? 410 : 201);
  t.equal((await send(webPushRequest(address, vapid, { payload: 'y', ttlSeconds: 60, urgency: 'normal' }))).status, 410, 'gone');
  service.answer = () => 201;
});

t.test('the VAPID JWT is signed once an hour per key and push service, never with less than 11 hours left', async (t) => {
  const address = (endpoint: string) => ({ kind: 'webPush' as const, endpoint, ...service.subscribe().keys });
  const at = Date.parse('2030-01-01T00:00:00Z');
  const auth = (endpoint: string, nowMs: number) => webPushRequest(address(endpoint), vapid, { payload: 'x', ttlSeconds: 60, urgency: 'normal' }, nowMs).headers.authorization!;
  const claims = (header: string) => JSON.parse(Buffer.from(/t=([^,]+)/.exec(header)![1]!.split('.')[1]!, 'base64url').toString()) as { aud: string; exp: number };
  const first = auth('https://push.example.net/a', at);
  t.equal(auth('https://push.example.net/b', at + 59 * 60_000), first, 'the same origin within the hour: the same JWT');
  t.equal(claims(first).exp, at / 1000 + 12 * 3600);
  const other = auth('https://updates.push.example.org/c', at + 1000);
  t.equal(claims(other).aud, 'https://updates.push.example.org', "another push service: a JWT of its own (aud its origin)");
  const later = auth('https://push.example.net/a', at + 61 * 60_000);
  t.not(later, first, 'after an hour: a new one');
  t.equal(claims(later).exp, (at + 61 * 60_000) / 1000 + 12 * 3600, 'with 12 hours ahead again');
});
