import { generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { chromiumMissing, dashboardPage, shootPanel, signUpWithApp } from '../helpers/dashboard-page.ts';
import { client, removeDir, startService } from '../helpers/index.ts';

// The dashboard's push panel in headless Chromium, driven the way a person does it: Web Push turned
// on (its public key shown), an APNs key refused and then saved, a malformed FCM key file refused
// with the field it gets wrong, private mode, a provider removed after confirming; what the
// management API then shows agrees.

const svc = await startService();
t.teardown(async () => {
  await svc.stop();
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
