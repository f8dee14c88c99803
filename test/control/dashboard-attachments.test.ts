import t from 'tap';
import { chromiumMissing, dashboardPage, reloadAndReadWhenShown, shootPanel, signUpWithApp } from '../helpers/dashboard-page.ts';
import { client, removeDir, startService } from '../helpers/index.ts';

// The dashboard's attachment settings in headless Chromium, driven the way a person does it:
// sizes typed in MiB, types one a line, what the deployment or the service refuses said under its
// field, the settings saved and still there after a reload, and then applied by the node.

// The deployment allows 1 MiB files: the panel says so, and refuses more.
const svc = await startService({ ATTACHMENT_MAX_BYTES: String(1024 * 1024) });
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});
const base = svc.controlUrl;

if (!chromiumMissing(t, 'dashboard attachment settings test'))
  t.test('sizes and types are set in the attachments panel, refusals are said under their field, the settings are kept and applied', async (t) => {
    const { page, problems } = await dashboardPage(t, base);
    const email = `attachments-${Date.now()}@acme.example`;
    const password = 'correct horse battery staple';
    const appId = await signUpWithApp(page, base, email, password);

    const panel = page.locator('section[aria-labelledby="attachments-title"]');
    await page.locator('section[aria-labelledby="attachments-title"][aria-busy="false"]').waitFor();
    const largest = panel.getByLabel('Largest file (MiB)');
    const accepted = panel.getByLabel('Accept only these types');
    const refused = panel.getByLabel('Also refuse');
    const save = panel.getByRole('button', { name: 'Save attachment settings' });
    t.equal(await largest.inputValue(), '', 'empty at first');
    t.match(await panel.locator('#attachments-maxFile-hint').textContent(), /Empty: 1 MiB, the deployment’s largest\./, "the deployment's value is shown");
    t.match(await panel.locator('#attachments-refused-hint').textContent(), /image\/svg\+xml/, 'and the types it always refuses');

    await largest.fill('lots');
    await save.click();
    await t.resolves(largest.and(page.locator('[aria-invalid="true"]')).waitFor(), 'a size that is no number is marked');
    t.match(await panel.locator('#attachments-maxFile-error').textContent(), /Enter a number above 0/);
    t.match(await panel.getByRole('alert').last().textContent(), /see the message under the field/, 'the form points to it');

    await largest.fill('2');
    await save.click();
    await panel.locator('#attachments-maxFile-error').waitFor();
    t.match(await panel.locator('#attachments-maxFile-error').textContent(), /^At most 1 MiB: the deployment allows no larger file\.$/, 'past the deployment: said in MiB');
    t.equal(await largest.getAttribute('aria-invalid'), 'true');
    await largest.fill('0.5');
    await accepted.fill('image/*\nnot a type');
    await save.click();
    await panel.locator('#attachments-allowed-error').waitFor();
    t.match(await panel.locator('#attachments-allowed-error').textContent(), /^Line 2 \(“not a type”\) is not a type\. Write type\/subtype/, 'a malformed type is named by its line');
    await shootPanel(page, panel, 'dashboard-attachments-refused');

    await accepted.fill('image/*\n\napplication/pdf');
    await refused.fill('image/gif');
    await save.click();
    await panel.getByRole('status').getByText('Saved.').waitFor();
    await shootPanel(page, panel, 'dashboard-attachments-saved');

    const firstSight = await reloadAndReadWhenShown(page, 'Last changed', ['attachments-maxFile', 'attachments-allowed']);
    t.same(firstSight, { 'attachments-maxFile': '0.5', 'attachments-allowed': 'image/*\napplication/pdf' }, 'the fields hold the stored settings in the render that shows them loaded');
    await panel.getByText(/Last changed/).waitFor();
    t.equal(await largest.inputValue(), '0.5', 'kept across a reload');
    t.equal(await accepted.inputValue(), 'image/*\napplication/pdf', 'blank lines dropped');
    t.equal(await refused.inputValue(), 'image/gif');

    // The node applies them to the next upload.
    const control = client(base);
    const token = (await control.post('/api/auth/login', { email, password })).body.accessToken as string;
    const apiKey = (await control.post(`/api/client/apps/${appId}/keys`, undefined, token)).body.token as string;
    const node = client(svc.nodeUrl);
    const userId = (await node.post('/api/users', { username: 'ann' }, apiKey)).body.userId as string;
    const jwt = (await node.post('/api/users/signin', { userId }, apiKey)).body.jwt as string;
    const chatId = (await node.post('/api/chats', { type: 'group', name: 'files', memberIds: [] }, jwt)).body.chatId as string;
    const ask = (size: number, type: string) => node.post(`/api/chats/${chatId}/uploads`, { name: 'f', size, type }, jwt);
    t.match(await ask(600_000, 'image/png'), { status: 413, body: { code: 'FILE_TOO_LARGE', errors: [{ message: 'must be at most 524288' }] } }, 'more than 0.5 MiB is refused');
    t.match(await ask(1000, 'video/mp4'), { status: 415, body: { code: 'FILE_TYPE_REFUSED' } }, 'a type not accepted is refused');
    t.match(await ask(1000, 'image/gif'), { status: 415 }, 'an accepted family, but a refused type');
    t.equal((await ask(1000, 'application/pdf')).status, 201, 'an accepted type within the size is taken');
    t.same(problems, [], 'no page error');
  });
