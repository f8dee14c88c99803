import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { NodeStore, PushDevice } from '../../node/store/index.ts';
import { NOW } from '../helpers/fixed-clock.ts';

/** Users' push devices (README, "Push notifications"): part of the node store conformance suite (see store-conformance.ts). */
export function pushConformance(withStore: (title: string, body: (t: Test, store: NodeStore) => Promise<void>) => void): void {
  const webPush = (n: number, keys = 'k'): PushDevice['address'] => ({ kind: 'webPush', endpoint: `https://push.example.com/send/${n}-${'x'.repeat(1500)}`, p256dh: `p256dh-${keys}`, auth: `auth-${keys}` });
  const device = (appId: string, userId: string, address: PushDevice['address'], at = NOW): PushDevice => ({ appId, userId, deviceId: randomUUID(), address, createdAt: at });

  withStore('push devices: registered, listed oldest first, the same address once, removed; at most max; tenants and users apart', async (t, store) => {
    const [app, other] = [randomUUID(), randomUUID()];
    const first = device(app, 'ann', webPush(1), '2030-01-01T00:00:01.000Z');
    t.same(await store.push.register(first, 3), { result: 'created', device: first }, 'a Web Push subscription (a long endpoint)');
    const apns = device(app, 'ann', { kind: 'apns', token: 'ab'.repeat(32) }, '2030-01-01T00:00:02.000Z');
    t.same(await store.push.register(apns, 3), { result: 'created', device: apns }, 'an APNs token');
    const again = await store.push.register(device(app, 'ann', webPush(1, 'new'), '2030-01-01T00:00:09.000Z'), 3);
    t.same(again, { result: 'exists', device: { ...first, address: webPush(1, 'new') } }, 'the same endpoint again: the device registered before, its keys replaced');
    t.same(await store.push.list(app, 'ann'), [{ ...first, address: webPush(1, 'new') }, apns], 'oldest first');
    const fcm = device(app, 'ann', { kind: 'fcm', token: 'fcm-token-1' }, '2030-01-01T00:00:03.000Z');
    t.equal((await store.push.register(fcm, 3)).result, 'created');
    t.same(await store.push.register(device(app, 'ann', { kind: 'fcm', token: 'fcm-token-2' }), 3), { result: 'limit' }, 'a fourth with max 3: refused');
    t.equal((await store.push.register(device(app, 'ann', { kind: 'apns', token: 'ab'.repeat(32) }), 3)).result, 'exists', 'a known address at the limit is not refused');
    t.same(await store.push.list(other, 'ann'), [], "another application's user of the same id has none");
    t.same(await store.push.list(app, 'bob'), [], 'another user has none');
    t.equal(await store.push.remove(app, 'ann', apns.deviceId), 'removed');
    t.equal(await store.push.remove(app, 'ann', apns.deviceId), 'not-found', 'removed once');
    t.equal(await store.push.remove(app, 'bob', first.deviceId), 'not-found', "another user cannot remove ann's");
    t.same((await store.push.list(app, 'ann')).map((d) => d.deviceId), [first.deviceId, fcm.deviceId], 'what is left');
    t.equal((await store.push.register(device(app, 'ann', { kind: 'fcm', token: 'fcm-token-2' }), 3)).result, 'created', 'a slot freed');
  });

  withStore('push devices: an address registered by another user moves to that user; concurrent registrations stay within max', async (t, store) => {
    const app = randomUUID();
    const shared = webPush(7);
    const ann = device(app, 'ann', shared);
    await store.push.register(ann, 10);
    const bob = device(app, 'bob', shared);
    t.equal((await store.push.register(bob, 10)).result, 'created', 'the browser signed in as bob');
    t.same(await store.push.list(app, 'ann'), [], 'ann no longer has it: no push of hers reaches bob');
    t.same((await store.push.list(app, 'bob')).map((d) => d.deviceId), [bob.deviceId]);
    t.equal(await store.push.remove(app, 'bob', bob.deviceId), 'removed');
    t.equal((await store.push.register(device(app, 'ann', shared), 10)).result, 'created', 'and back to ann after bob removed it');

    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.push.register(device(app, 'cat', { kind: 'fcm', token: `t${i}` }), 5)));
    const listed = await store.push.list(app, 'cat');
    t.ok(listed.length <= 5, `at most 5 stored (${listed.length})`);
    t.equal(results.filter((r) => r.result === 'created').length, listed.length, 'every one stored was answered created, every other refused');
  });

  withStore('push: a chat muted for one user only, and unmuted again', async (t, store) => {
    const [app, other] = [randomUUID(), randomUUID()];
    t.equal(await store.push.chatMuted(app, 'ann', 'c1'), false, 'not muted at first');
    await store.push.muteChat(app, 'ann', 'c1', true);
    await store.push.muteChat(app, 'ann', 'c1', true);
    t.equal(await store.push.chatMuted(app, 'ann', 'c1'), true, 'muted (twice is once)');
    t.equal(await store.push.chatMuted(app, 'ann', 'c2'), false, 'her other chat is not');
    t.equal(await store.push.chatMuted(app, 'bob', 'c1'), false, 'another member is not');
    t.equal(await store.push.chatMuted(other, 'ann', 'c1'), false, "another application's user of the same id is not");
    await store.push.muteChat(app, 'ann', 'c1', false);
    t.equal(await store.push.chatMuted(app, 'ann', 'c1'), false, 'unmuted');
    await store.push.muteChat(app, 'ann', 'c1', false);
    t.equal(await store.push.chatMuted(app, 'ann', 'c1'), false, 'unmuting an unmuted chat is no error');
  });
}
