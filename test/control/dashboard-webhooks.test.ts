import { mkdirSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Locator, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import { chromiumMissing, dashboardPage, DESKTOP, PHONE } from '../helpers/dashboard-page.ts';
import { removeDir, startService } from '../helpers/index.ts';

// The dashboard's webhooks panel in headless Chromium, driven the way a person does it: an endpoint
// refused at its URL field, then added with two events; its secret read from the page; test events
// that reach a receiver on this machine and verify (Standard Webhooks) with that secret, then only
// with the rotated one; the endpoint disabled, then deleted.

const ARTIFACTS = new URL('../../artifacts/', import.meta.url).pathname;

// Loopback http:// receivers are refused unless the service is told they are fine (tests only).
const svc = await startService({ WEBHOOK_ALLOW_INSECURE_URLS: 'true' });
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});
const base = svc.controlUrl;

/** A receiver on 127.0.0.1 that records each POST and answers 204. */
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method === 'POST') received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    res.statusCode = 204;
    res.end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/chat-events`;

/** Whether a delivery verifies with the secret (the receiver's check, with the reference library). */
const verifies = (delivery: { headers: IncomingHttpHeaders; body: string }, secret: string) => {
  try {
    new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

/** The panel at desktop and at phone width, into artifacts/. */
async function shoot(page: Page, panel: Locator, name: string) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await panel.screenshot({ path: `${ARTIFACTS}dashboard-webhooks-${name}-desktop.png` });
  await page.setViewportSize(PHONE);
  await panel.screenshot({ path: `${ARTIFACTS}dashboard-webhooks-${name}-phone.png` });
  await page.setViewportSize(DESKTOP);
}

if (!chromiumMissing(t, 'dashboard webhooks test'))
t.test('an endpoint is refused at its URL, added, tested (signature verified), its secret revealed and rotated, disabled and deleted', async (t) => {
  const { page, problems } = await dashboardPage(t, base);

  // Sign up and create an application.
  await page.goto(`${base}/#/signup`);
  await page.getByLabel('Company name').fill('Acme');
  await page.getByLabel('E-mail').fill(`hooks-${Date.now()}@acme.example`);
  await page.getByLabel('Password').fill('correct horse battery staple');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();
  await page.getByLabel('Application name').fill('Acme chat');
  await page.getByRole('button', { name: 'Create application' }).click();
  await page.getByRole('heading', { level: 1, name: 'Acme chat' }).waitFor();
  const panel = page.locator('section[aria-labelledby="hooks-title"]');
  await panel.getByText('No endpoint yet.').waitFor();
  t.match(await panel.getByRole('note').first().textContent(), /Only the test event is delivered today/, 'the panel says what is delivered today');

  // The form: "select all" picks every event and then none; a URL the service refuses is marked.
  const opener = panel.getByRole('button', { name: 'New endpoint', exact: true });
  await opener.click();
  t.equal(await opener.getAttribute('aria-expanded'), 'true', 'the button says the form is open');
  const form = panel.getByRole('form', { name: 'Add a webhook endpoint' });
  const events = form.getByRole('group', { name: 'Events to receive' });
  t.ok(await form.getByLabel('Endpoint URL').evaluate((el) => el === document.activeElement), 'focus goes to the URL field');
  await events.getByLabel('Select all').check();
  t.equal(await events.locator('input[name="events"]:checked').count(), 15, 'select all checks every event');
  await events.getByLabel('Select all').uncheck();
  t.equal(await events.locator('input[name="events"]:checked').count(), 0, 'and unchecks them');
  await events.getByLabel('message.new', { exact: true }).check();
  await events.getByLabel('chat.created', { exact: true }).check();
  t.equal(await events.getByLabel('Select all').evaluate((el) => (el as HTMLInputElement).indeterminate), true, 'some chosen: select all is mixed');
  const url = form.getByLabel('Endpoint URL');
  await url.fill('ftp://x');
  await form.getByRole('button', { name: 'Add endpoint' }).click();
  await t.resolves(url.and(page.locator('[aria-invalid="true"]')).waitFor(), 'the refused URL is marked invalid');
  t.match(await form.locator('.field', { has: page.getByLabel('Endpoint URL') }).locator('.field-error').textContent(), /http:\/\/ or https:\/\/ URL/, 'its message is under it');
  t.match(await form.getByRole('alert').textContent(), /see the message under the field/, 'and the form points to it');
  await shoot(page, panel, 'refused');

  // The receiver's URL: the endpoint is added and its secret shown, with what it is for.
  await url.fill(receiverUrl);
  await form.getByLabel('Description (optional)').fill('Local receiver');
  await url.press('Enter');
  const newSecret = panel.getByRole('textbox', { name: 'Signing secret of the new endpoint' });
  const secret = await newSecret.inputValue();
  t.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/, 'the secret is shown');
  t.match(await panel.locator('.new-key').textContent(), /Standard Webhooks/, 'with a note that it verifies deliveries');
  t.equal(await opener.getAttribute('aria-expanded'), 'false', 'the form closes');
  const item = panel.locator('li.hook', { hasText: receiverUrl });
  await item.waitFor();
  t.same(await item.locator('.event-list code').allTextContents(), ['message.new', 'chat.created'], 'the two events are listed');
  t.match(await item.locator('.badge').textContent(), /ACTIVE/, 'active');
  t.match(await item.textContent(), /Local receiver/, 'with its description');
  await panel.getByRole('button', { name: 'Copy signing secret of the new endpoint' }).click();
  await panel.locator('.new-key .copy-said', { hasText: 'Copied' }).waitFor();
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'the copy button copies it');
  await shoot(page, panel, 'new');
  await panel.getByRole('button', { name: 'I have stored it' }).click();
  await newSecret.waitFor({ state: 'detached' });

  // A test event: the page says it was delivered, and the receiver's check passes with the secret.
  const said = item.getByRole('status').filter({ hasText: /Deliver/ });
  await item.getByRole('button', { name: `Send test event to ${receiverUrl}` }).click();
  await said.filter({ hasText: /^Delivered: HTTP 204 in \d+ ms\.$/ }).waitFor();
  t.equal(received.length, 1, 'the receiver got one POST');
  t.ok(verifies(received[0]!, secret), 'its signature verifies with the secret from the page');
  t.match(JSON.parse(received[0]!.body), { type: 'webhook.test', id: received[0]!.headers['webhook-id'] }, 'a test event, its id the webhook-id');

  // Reveal the secret: the same one, shown with a copy button.
  await item.getByRole('button', { name: `Reveal secret of ${receiverUrl}` }).click();
  const rowSecret = item.getByRole('textbox', { name: 'Signing secret', exact: true });
  t.equal(await rowSecret.inputValue(), secret, 'the revealed secret is the one shown at creation');
  await t.resolves(item.getByRole('button', { name: 'Copy signing secret', exact: true }).waitFor(), 'with a copy button');
  await shoot(page, panel, 'panel');

  // Rotate it, after confirming: the next delivery verifies with the new secret only.
  await item.getByRole('button', { name: `Rotate secret of ${receiverUrl}` }).click();
  const rotateDialog = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
  await rotateDialog.waitFor();
  await rotateDialog.getByRole('button', { name: 'Rotate secret' }).click();
  await rotateDialog.waitFor({ state: 'detached' });
  await item.getByText('New secret:').waitFor();
  const rotated = await rowSecret.inputValue();
  t.not(rotated, secret, 'a new secret is shown');
  await item.getByRole('button', { name: `Send test event to ${receiverUrl}` }).click();
  // The earlier result stays on screen until this one is in: wait for the POST, then for the answer.
  const deadline = Date.now() + 15_000;
  while (received.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.equal(received.length, 2, 'one more POST');
  await item.locator('button:not([disabled])', { hasText: 'Send test event' }).waitFor();
  await said.filter({ hasText: /^Delivered: HTTP 204/ }).waitFor();
  t.ok(verifies(received[1]!, rotated), 'it verifies with the new secret');
  t.notOk(verifies(received[1]!, secret), 'and not with the old one');

  // Disable it: the status says so, with why; then enable it again.
  await item.getByRole('button', { name: `Disable ${receiverUrl}` }).click();
  await item.locator('.badge', { hasText: 'DISABLED' }).waitFor();
  t.match(await item.locator('.hook-status').textContent(), /disabled by the integrator/, 'with the reason');
  await shoot(page, panel, 'disabled');
  await item.getByRole('button', { name: `Enable ${receiverUrl}` }).click();
  await item.locator('.badge', { hasText: 'ACTIVE' }).waitFor();
  await item.getByRole('button', { name: `Disable ${receiverUrl}` }).click();
  await item.locator('.badge', { hasText: 'DISABLED' }).waitFor();

  // Delete it, after confirming (Escape first cancels): it is gone, and focus is on the panel.
  const remove = item.getByRole('button', { name: `Delete ${receiverUrl}` });
  await remove.click();
  const deleteDialog = page.getByRole('dialog', { name: 'Delete this endpoint?' });
  await deleteDialog.waitFor();
  await page.keyboard.press('Escape');
  await deleteDialog.waitFor({ state: 'detached' });
  t.ok(await remove.evaluate((el) => el === document.activeElement), 'Escape cancels; focus returns to the button');
  await page.keyboard.press('Enter');
  await deleteDialog.getByRole('button', { name: 'Delete endpoint' }).click();
  await item.waitFor({ state: 'detached' });
  await panel.getByText('No endpoint yet.').waitFor();
  t.equal(await page.evaluate(() => document.activeElement?.id), 'hooks-title', 'focus moves to the panel heading');
  t.notMatch(await page.content(), rotated, 'the secret is no longer on the page');
  t.same(problems, [], 'no script error and no CSP violation');
});
