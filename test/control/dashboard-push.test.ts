import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import t from 'tap';
import type { PushDeliveryRecord } from '../../common/push/index.ts';
import { LmdbControlStore } from '../../control/index.ts';
import { chromiumMissing, dashboardPage, shootPanel, signUpWithApp } from '../helpers/dashboard-page.ts';
import { client, removeDir, startService } from '../helpers/index.ts';
import { eventually, pushPeersEnv } from '../helpers/push-peers.ts';
import { LocalPushService } from '../helpers/push-service.ts';

// The dashboard's push panel in headless Chromium, driven the way a person does it: Web Push turned
// on (its public key shown), an APNs key refused and then saved, a malformed FCM key file refused
// with the field it gets wrong, private mode, a provider removed after confirming; what the
// management API then shows agrees. Its log of recent pushes: every kind of outcome shown, one
// provider's on asking, an empty state; and the attempt a real push made (to the tests' own Web
// Push service) shown after Refresh.

const pushService = await new LocalPushService().start();
const svc = await startService(pushPeersEnv({ webPush: pushService }));
// The running service's store, opened beside it (LMDB allows a second process), to write
// attempts of every kind as nodes record them.
const store = LmdbControlStore.open(join(svc.dataDir, 'control'));
t.teardown(async () => {
  await store.close();
  await svc.stop();
  await pushService.stop();
  removeDir(svc.dataDir);
});
const base = svc.controlUrl;
const pem = (kind: 'ec' | 'rsa') =>
  (kind === 'ec'
    ? generateKeyPairSync('ec', { namedCurve: 'prime256v1', privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } })
    : generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } })
  ).privateKey;

if (!chromiumMissing(t, 'dashboard push test'))
  t.test('push providers are set in the push panel, refusals said under their field, a removal confirmed', async (t) => {
    const { page, problems } = await dashboardPage(t, base);
    const email = `push-${Date.now()}@acme.example`;
    const password = 'correct horse battery staple';
    const appId = await signUpWithApp(page, base, email, password);
    const panel = page.locator('section[aria-labelledby="push-title"]');
    await page.locator('section[aria-labelledby="push-title"][aria-busy="false"]').waitFor();

    // Web Push: a contact turns it on; the public key is shown.
    const web = panel.getByRole('form', { name: 'Web Push' });
    await web.getByLabel('Contact for push services').fill('ops@acme.example');
    await web.getByRole('button', { name: 'Turn on Web Push' }).click();
    await web.locator('#push-subject-error').waitFor();
    t.match(await web.locator('#push-subject-error').textContent(), /must match pattern/i, 'a contact that is neither mailto: nor https: is refused under its field');
    await web.getByLabel('Contact for push services').fill('mailto:ops@acme.example');
    await web.getByRole('button', { name: 'Turn on Web Push' }).click();
    const key = web.locator('code.key');
    await key.waitFor();
    t.equal(Buffer.from((await key.textContent())!, 'base64url').length, 65, 'the VAPID public key shown');

    // APNs: an RSA key is refused under the key field; a P-256 key is saved and never shown.
    const apns = panel.getByRole('form', { name: 'APNs' });
    await apns.getByLabel('Key ID').fill('ABCDE12345');
    await apns.getByLabel('Team ID').fill('TEAM123456');
    await apns.getByLabel('Bundle ID').fill('com.acme.chat');
    await apns.getByLabel('Environment').selectOption('sandbox');
    await apns.getByLabel('.p8 key').fill(pem('rsa'));
    await apns.getByRole('button', { name: 'Save APNs' }).click();
    await apns.locator('#push-key-error').waitFor();
    t.match(await apns.locator('#push-key-error').textContent(), /Must be an EC key/, 'an RSA key: said under the key');
    t.equal(await apns.getByLabel('.p8 key').getAttribute('aria-invalid'), 'true');
    await apns.getByLabel('.p8 key').fill(pem('ec'));
    await apns.getByRole('button', { name: 'Save APNs' }).click();
    await apns.getByRole('status').getByText('APNs saved.').waitFor();
    t.match(await apns.textContent(), /On: key ABCDE12345 of team TEAM123456, for com\.acme\.chat \(sandbox\)/, 'what is set, without the key');
    t.equal(await apns.getByLabel('.p8 key').inputValue(), '', 'the key field is emptied once saved');

    // FCM: a key file without a private key is refused, naming what is wrong.
    const fcm = panel.getByRole('form', { name: 'FCM' });
    const account = { type: 'service_account', project_id: 'acme-chat', client_email: 'push@acme-chat.iam.gserviceaccount.com' };
    await fcm.getByLabel('Service account key file').fill(JSON.stringify(account));
    await fcm.getByRole('button', { name: 'Save FCM' }).click();
    await fcm.locator('#push-serviceAccount-error').waitFor();
    t.match(await fcm.locator('#push-serviceAccount-error').textContent(), /The key file’s private_key is missing\./, 'the missing private key is named');
    await shootPanel(page, panel, 'dashboard-push-refused');
    await fcm.getByLabel('Service account key file').fill(JSON.stringify({ ...account, private_key: pem('rsa') }));
    await fcm.getByRole('button', { name: 'Save FCM' }).click();
    await fcm.getByRole('status').getByText('FCM saved.').waitFor();

    await panel.getByLabel(/Private mode/).check();
    await page.waitForFunction(() => !(document.querySelector('input[name="privateMode"]') as HTMLInputElement).disabled);
    await shootPanel(page, panel, 'dashboard-push-set');

    // Removing FCM, confirmed in a dialog.
    await fcm.getByRole('button', { name: 'Remove FCM' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove FCM?' });
    await dialog.getByRole('button', { name: 'Remove FCM' }).click();
    await fcm.getByText('Off.').waitFor();

    const control = client(base);
    const token = (await control.post('/api/auth/login', { email, password })).body.accessToken as string;
    const stored = (await control.get(`/api/client/apps/${appId}/push`, token)).body;
    t.match(stored, { privateMode: true, webPush: { subject: 'mailto:ops@acme.example', publicKey: await key.textContent() }, apns: { keyId: 'ABCDE12345', environment: 'sandbox' } }, 'the management API agrees');
    t.notOk('fcm' in stored, 'FCM removed');
    t.same(problems, [], 'no page error');
  });

/** The push panel's log of an application whose page is open: its section, rows, filter and Refresh. */
function pushLog(page: Awaited<ReturnType<typeof dashboardPage>>['page']) {
  const section = page.locator('section[aria-labelledby="push-log-title"]');
  return {
    section,
    rows: section.locator('table.push-attempts tbody tr'),
    /** Until the log says (to screen readers) that it shows this, which it says once the list for the filter chosen is in. */
    says: (text: string) => section.locator('p[role="status"]', { hasText: new RegExp(`^${text}$`) }).waitFor(),
    filter: (label: string) => section.getByLabel('Provider').selectOption({ label }),
    refresh: () => section.getByRole('button', { name: 'Refresh recent pushes' }).click(),
  };
}

if (!chromiumMissing(t, 'dashboard push log test'))
  t.test('the log of recent pushes: each outcome shown, one provider on asking, an empty state', async (t) => {
    const { page, problems } = await dashboardPage(t, base);
    const appId = await signUpWithApp(page, base, `push-log-${Date.now()}@acme.example`);
    const log = pushLog(page);
    await log.says('0 attempts shown');
    t.match(await log.section.textContent(), /No push attempt yet\./, 'the empty state');
    await shootPanel(page, log.section, 'dashboard-push-log-empty');

    const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();
    const made = (over: Partial<PushDeliveryRecord> & Pick<PushDeliveryRecord, 'provider' | 'result' | 'at'>): PushDeliveryRecord => ({
      id: randomUUID(),
      appId,
      eventId: `evt_${randomUUID()}`,
      messageId: randomUUID(),
      userId: 'user-ada',
      deviceId: randomUUID(),
      attempt: 1,
      durationMs: 35,
      ...over,
    });
    const attempts = [
      made({ provider: 'webPush', result: 'sent', statusCode: 201, at: ago(50) }),
      made({ provider: 'apns', result: 'retry', statusCode: 503, reason: 'ServiceUnavailable', nextRetryAt: ago(-30), at: ago(40) }),
      made({ provider: 'fcm', result: 'gone', statusCode: 404, reason: 'UNREGISTERED', userId: 'user-grace', at: ago(30) }),
      made({ provider: 'webPush', result: 'failed', statusCode: 403, reason: 'the push service refused the VAPID signature', at: ago(20) }),
      made({ provider: 'apns', result: 'sent', statusCode: 200, attempt: 2, at: ago(10) }),
    ];
    await store.pushSettings.recordDeliveries(attempts);
    await log.refresh();
    await log.says('5 attempts shown');
    t.equal(await log.rows.count(), 5, 'every attempt after Refresh');
    const cells = async (row: number) => (await log.rows.nth(row).locator('th, td').allTextContents()).map((c) => c.trim());
    const [newest, failed, gone, retry] = [await cells(0), await cells(1), await cells(2), await cells(3)];
    t.match(newest, [/\d/, 'APNs', 'SENT 200', '—', 'user-ada', attempts[4]!.deviceId, '2'], 'newest first: time, provider, result and status, reason, user, device, attempt');
    t.match(failed, [/./, 'Web Push', 'FAILED 403', 'the push service refused the VAPID signature'], 'a refusal with its reason');
    t.match(gone, [/./, 'FCM', 'GONE 404', 'UNREGISTERED', 'user-grace'], 'a device gone');
    t.match(retry, [/./, 'APNs', 'RETRY 503', /^ServiceUnavailable\s*Next try/], 'a retry with when it is tried again');
    t.equal(await log.rows.nth(0).locator('time').getAttribute('datetime'), attempts[4]!.at, 'the exact time kept on the element');
    await shootPanel(page, log.section, 'dashboard-push-log');

    await log.filter('APNs');
    await log.says('2 attempts through APNs shown');
    t.same(await log.rows.locator('td[data-label="Provider"]').allTextContents(), ['APNs', 'APNs'], 'APNs only');
    await log.filter('FCM');
    await log.says('1 attempt through FCM shown');
    t.same(await log.rows.locator('td[data-label="Result"]').allTextContents(), ['GONE 404'], 'FCM only');
    await log.filter('Web Push');
    await log.says('2 attempts through Web Push shown');
    await store.pushSettings.delete(appId);
    await log.refresh();
    await log.says('0 attempts through Web Push shown');
    t.match(await log.section.textContent(), /No push attempt through Web Push yet\./, "an emptied log: the filter's empty state");
    t.equal(await log.rows.count(), 0);
    await log.filter('All providers');
    await log.says('0 attempts shown');
    t.same(problems, [], 'no page error');
  });

if (!chromiumMissing(t, 'dashboard push log test'))
  t.test('a message to an offline user with a Web Push subscription shows as a sent attempt', async (t) => {
    const { page, problems } = await dashboardPage(t, base);
    const email = `push-sent-${Date.now()}@acme.example`;
    const password = 'correct horse battery staple';
    const appId = await signUpWithApp(page, base, email, password);
    const log = pushLog(page);
    await log.says('0 attempts shown');

    // The integrator's side, through the APIs: Web Push on, an API key, two users, bob subscribed and not connected.
    const control = client(base);
    const node = client(svc.nodeUrl);
    const token = (await control.post('/api/auth/login', { email, password })).body.accessToken as string;
    t.equal((await control.put(`/api/client/apps/${appId}/push/web-push`, { subject: 'mailto:ops@acme.example' }, token)).status, 200, 'Web Push on');
    const apiKey = (await control.post(`/api/client/apps/${appId}/keys`, undefined, token)).body.token as string;
    const user = async (username: string) => {
      const { userId } = (await node.post('/api/users', { username: `${username}-${Date.now()}` }, apiKey)).body as { userId: string };
      return { userId, jwt: (await node.post('/api/users/signin', { userId }, apiKey)).body.jwt as string };
    };
    const [alice, bob] = [await user('alice'), await user('bob')];
    const subscription = pushService.subscribe();
    const device = await node.post('/api/push/devices', { webPush: { endpoint: subscription.endpoint, keys: subscription.keys } }, bob.jwt);
    t.equal(device.status, 201, device.text);
    const chatId = (await node.post('/api/chats', { type: 'group', name: 'Team', memberIds: [bob.userId] }, alice.jwt)).body.chatId as string;
    t.equal((await node.post(`/api/messages/${chatId}`, { content: 'Lunch at noon?' }, alice.jwt)).status, 201, 'alice writes');
    await pushService.until((received) => received.some((p) => p.subscriptionId === subscription.id), 5_000);
    await eventually(async () => (await control.get(`/api/client/apps/${appId}/push/deliveries`, token)).body.deliveries?.length > 0, 10_000, 'the attempt recorded by the node');

    await log.refresh();
    await log.says('1 attempt shown');
    const cells = (await log.rows.first().locator('th, td').allTextContents()).map((c) => c.trim());
    t.match(cells, [/\d/, 'Web Push', /^SENT 20\d$/, '—', bob.userId, device.body.deviceId, '1'], "bob's push: sent, his user and device ids, the first attempt");
    await shootPanel(page, log.section, 'dashboard-push-log-sent');
    t.same(problems, [], 'no page error');
  });
