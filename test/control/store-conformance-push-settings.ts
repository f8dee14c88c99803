import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { ControlStore } from '../../control/index.ts';
import { NOW } from '../helpers/fixed-clock.ts';

const LATER = '2031-01-02T00:00:00.000Z';

/** The PushSettingsStore part of the control store conformance suite (see store-conformance.ts). */
export function pushSettingsStoreConformance(t: Test, fresh: (t: Test) => Promise<ControlStore>): void {
  const webPush = (n: number) => ({ subject: 'mailto:ops@example.com', publicKey: `public-${n}`, privateKey: `private-${n}`, createdAt: NOW });
  const apns = { keyId: 'ABCDE12345', teamId: 'TEAM123456', key: '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n', topic: 'com.example.chat', environment: 'sandbox' as const, updatedAt: NOW };
  const fcm = { projectId: 'example-chat', clientEmail: 'push@example-chat.iam.gserviceaccount.com', privateKey: 'pem', tokenUri: 'https://oauth2.googleapis.com/token', updatedAt: NOW };

  t.test('push settings: each part set, read back with its secret, replaced and removed apart from the others, per application', async (t) => {
    const { pushSettings } = await fresh(t);
    const [app, other] = [randomUUID(), randomUUID()];
    t.equal(await pushSettings.get(app), undefined, 'none at first');
    await pushSettings.put(app, 'apns', apns, NOW);
    t.same(await pushSettings.get(app), { appId: app, privateMode: false, apns, updatedAt: NOW }, 'one part: private mode off by default');
    t.equal(await pushSettings.createWebPush(app, webPush(1), NOW), 'created');
    await pushSettings.put(app, 'fcm', fcm, NOW);
    await pushSettings.put(app, 'options', true, LATER);
    t.same(await pushSettings.get(app), { appId: app, privateMode: true, webPush: webPush(1), apns, fcm, updatedAt: LATER }, 'every part, the latest time');
    t.equal(await pushSettings.get(other), undefined, 'another application has none');
    await pushSettings.put(app, 'apns', { ...apns, environment: 'production' }, LATER);
    await pushSettings.put(app, 'fcm', undefined, LATER);
    const after = await pushSettings.get(app);
    t.same([after?.apns?.environment, after?.fcm, after?.webPush], ['production', undefined, webPush(1)], 'a part replaced and one removed; the others kept');
    await pushSettings.delete(app);
    t.equal(await pushSettings.get(app), undefined, 'deleted whole');
    await pushSettings.delete(app);
    t.pass('deleting what is absent succeeds');
  });

  t.test('push settings: the Web Push key pair is made once; its subject changes, its keys never', async (t) => {
    const { pushSettings } = await fresh(t);
    const app = randomUUID();
    t.equal(await pushSettings.updateWebPush(app, 'mailto:x@example.com', NOW), 'not-found', 'no part to update');
    const outcomes = await Promise.all([1, 2, 3, 4].map((n) => pushSettings.createWebPush(app, webPush(n), NOW)));
    t.equal(outcomes.filter((o) => o === 'created').length, 1, 'of concurrent first sets exactly one creates');
    const stored = (await pushSettings.get(app))!.webPush!;
    const winner = outcomes.indexOf('created') + 1;
    t.same(stored, webPush(winner), "the winner's key pair is the one stored");
    t.equal(await pushSettings.createWebPush(app, webPush(9), NOW), 'exists', 'a later create leaves it');
    t.equal(await pushSettings.updateWebPush(app, 'https://example.com/contact', LATER), 'updated');
    t.same((await pushSettings.get(app))!.webPush, { ...webPush(winner), subject: 'https://example.com/contact' }, 'a new subject, the same keys');
    t.equal(await pushSettings.updateWebPush(app, undefined, LATER), 'updated', 'removed');
    t.equal(await pushSettings.get(app), undefined, 'nothing left');
    t.equal(await pushSettings.createWebPush(app, webPush(7), NOW), 'created', 'made again after a removal: a new pair');
  });
}
