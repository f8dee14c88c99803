import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { PUSH_DELIVERIES_KEPT, type PushDeliveryRecord } from '../../common/push/index.ts';
import type { ControlStore } from '../../control/index.ts';
import { at, NOW } from '../helpers/fixed-clock.ts';

const LATER = '2031-01-02T00:00:00.000Z';

/** An attempt of `appId` made `seconds` after NOW (ids random unless given; a field given as undefined is left out). */
function attempt(appId: string, seconds: number, over: Partial<PushDeliveryRecord> = {}): PushDeliveryRecord {
  const record: PushDeliveryRecord = {
    id: randomUUID(),
    appId,
    provider: 'webPush',
    eventId: `evt_${randomUUID()}`,
    messageId: randomUUID(),
    userId: 'user-1',
    deviceId: randomUUID(),
    attempt: 1,
    result: 'sent',
    statusCode: 201,
    durationMs: 12,
    at: at(seconds),
    ...over,
  };
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as PushDeliveryRecord;
}

/** Newest first: by `at`, then id, both descending (the order the store lists in). */
const newestFirst = (records: PushDeliveryRecord[]) => [...records].sort((a, b) => b.at.localeCompare(a.at) || b.id.localeCompare(a.id));

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

  t.test('push deliveries: newest first by time then id, limited, filtered by provider, each application its own', async (t) => {
    const { pushSettings } = await fresh(t);
    const [app, other] = [randomUUID(), randomUUID()];
    t.same(await pushSettings.deliveries(app, undefined, 50), [], 'none at first');
    // Over three minutes, two attempts at the same instant, every field an attempt may carry.
    const mine = [
      attempt(app, 0),
      attempt(app, 30, { provider: 'apns', result: 'retry', statusCode: 503, reason: 'ServiceUnavailable', nextRetryAt: at(90) }),
      attempt(app, 61, { provider: 'fcm', result: 'gone', statusCode: 404, reason: 'UNREGISTERED', attempt: 2 }),
      attempt(app, 61, { provider: 'apns' }),
      attempt(app, 125, { provider: 'webPush', result: 'failed', statusCode: undefined, reason: 'connect ECONNREFUSED', durationMs: 0 }),
      attempt(app, 126, { provider: 'apns', attempt: 2 }),
    ];
    const theirs = [attempt(other, 1, { provider: 'apns' }), attempt(other, 200)];
    // Shuffled, both applications in one call, as a node sends them.
    await pushSettings.recordDeliveries([mine[3]!, theirs[0]!, mine[0]!, mine[5]!, mine[2]!, theirs[1]!, mine[1]!, mine[4]!]);
    t.same(await pushSettings.deliveries(app, undefined, 50), newestFirst(mine), 'every attempt, as recorded, newest first (a tie by id)');
    t.same(await pushSettings.deliveries(app, undefined, 3), newestFirst(mine).slice(0, 3), 'at most the limit: the newest');
    t.same(await pushSettings.deliveries(app, 'apns', 50), newestFirst(mine.filter((r) => r.provider === 'apns')), "one provider's, newest first");
    t.same(await pushSettings.deliveries(app, 'apns', 1), [mine[5]], "one provider's, limited");
    t.same(await pushSettings.deliveries(app, 'fcm', 50), [mine[2]]);
    t.same(await pushSettings.deliveries(other, undefined, 50), newestFirst(theirs), 'another application lists only its own');
    t.same(await pushSettings.deliveries(other, 'fcm', 50), [], 'and none of a provider it has none of');
    t.same(await pushSettings.deliveries(randomUUID(), undefined, 50), [], 'an application with none');
  });

  t.test('push deliveries: an attempt recorded again is one entry', async (t) => {
    const { pushSettings } = await fresh(t);
    const app = randomUUID();
    const records = [attempt(app, 0), attempt(app, 10, { provider: 'fcm' }), attempt(app, 70)];
    await pushSettings.recordDeliveries(records);
    await pushSettings.recordDeliveries(records);
    await pushSettings.recordDeliveries([records[1]!, records[1]!]);
    await pushSettings.recordDeliveries([]);
    t.same(await pushSettings.deliveries(app, undefined, 50), newestFirst(records), 'each once');
    t.same(await pushSettings.deliveries(app, 'fcm', 50), [records[1]], 'each once in its provider’s listing');
  });

  t.test(`push deliveries: an application's newest ${PUSH_DELIVERIES_KEPT} are listed, however many are recorded`, async (t) => {
    const { pushSettings } = await fresh(t);
    const [app, other] = [randomUUID(), randomUUID()];
    // A few more than kept, a second apart (some 17 minutes), in calls of 250 as a node's flushes.
    const records = Array.from({ length: PUSH_DELIVERIES_KEPT + 5 }, (_, i) => attempt(app, i, { provider: i % 10 === 0 ? 'fcm' : 'webPush' }));
    for (let i = 0; i < records.length; i += 250) await pushSettings.recordDeliveries(records.slice(i, i + 250));
    await pushSettings.recordDeliveries([attempt(other, 0)]);
    const listed = await pushSettings.deliveries(app, undefined, PUSH_DELIVERIES_KEPT + 100);
    t.equal(listed.length, PUSH_DELIVERIES_KEPT, 'no more than kept, whatever the limit');
    t.same(listed.map((r) => r.id), newestFirst(records).slice(0, PUSH_DELIVERIES_KEPT).map((r) => r.id), 'the newest; the oldest dropped');
    t.same(await pushSettings.deliveries(app, undefined, 2), newestFirst(records).slice(0, 2), 'a small limit reads the newest');
    t.same((await pushSettings.deliveries(app, 'fcm', 5)).map((r) => r.id), newestFirst(records.filter((r) => r.provider === 'fcm')).slice(0, 5).map((r) => r.id), "a provider's newest");
    t.equal((await pushSettings.deliveries(other, undefined, 50)).length, 1, 'another application keeps its own');
  });

  t.test('push deliveries: deleting the application removes its log, and no other', async (t) => {
    const { pushSettings } = await fresh(t);
    const [app, other] = [randomUUID(), randomUUID()];
    await pushSettings.put(app, 'options', true, NOW);
    const theirs = [attempt(other, 5, { provider: 'apns' })];
    await pushSettings.recordDeliveries([attempt(app, 0), attempt(app, 5, { provider: 'apns' }), attempt(app, 90, { provider: 'fcm' }), ...theirs]);
    await pushSettings.delete(app);
    t.equal(await pushSettings.get(app), undefined, 'the settings gone');
    t.same(await pushSettings.deliveries(app, undefined, 50), [], 'the log gone');
    for (const provider of ['webPush', 'apns', 'fcm'] as const) t.same(await pushSettings.deliveries(app, provider, 50), [], `${provider}: gone`);
    t.same(await pushSettings.deliveries(other, undefined, 50), theirs, "another application's log kept");
    await pushSettings.delete(app);
    t.pass('deleting again succeeds');
  });
}
