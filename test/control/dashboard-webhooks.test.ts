import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import t from 'tap';
import { chromiumMissing, dashboardPage, focused, shootPanel, signUpWithApp } from '../helpers/dashboard-page.ts';
import { removeDir, startService } from '../helpers/index.ts';
import { WEBHOOK_EVENTS } from '../../common/webhooks/index.ts';

// The dashboard's webhooks panel in headless Chromium, driven the way a person does it: an endpoint
// refused at its URL field, then added with two events; its secret read from the page; test events
// that reach a receiver on this machine and verify (Standard Webhooks) with that secret, then only
// with the rotated one; the endpoint disabled, then deleted. Then another endpoint edited (URL and
// events), its failed test read in its delivery log and retried once the receiver is fixed.

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

/** A receiver on 127.0.0.1 answering `flaky.status` (500 until the test fixes it). */
const flaky = { status: 500, got: [] as { headers: IncomingHttpHeaders; body: string }[] };
const flakyServer = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method === 'POST') flaky.got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    res.statusCode = flaky.status;
    res.end();
  });
});
await new Promise<void>((resolve) => flakyServer.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => flakyServer.close(() => resolve())));
const flakyUrl = `http://127.0.0.1:${(flakyServer.address() as AddressInfo).port}/flaky`;

/** Signs up a new account and creates an application; its page is open, with its webhooks panel. */
async function withApp(page: Page) {
  await signUpWithApp(page, base, `hooks-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@acme.example`);
  return page.locator('section[aria-labelledby="hooks-title"]');
}

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
if (!chromiumMissing(t, 'dashboard webhooks test'))
t.test('an endpoint is refused at its URL, added, tested (signature verified), its secret revealed and rotated, disabled and deleted', async (t) => {
  const { page, problems } = await dashboardPage(t, base);

  // Sign up and create an application.
  const panel = await withApp(page);
  await panel.getByText('No endpoint yet.').waitFor();
  t.match(await panel.getByRole('note').first().textContent(), /at least once: deduplicate by its webhook-id/, 'the panel says how events are delivered');

  // The form: "select all" picks every event and then none; a URL the service refuses is marked.
  const opener = panel.getByRole('button', { name: 'New endpoint', exact: true });
  await opener.click();
  t.equal(await opener.getAttribute('aria-expanded'), 'true', 'the button says the form is open');
  const form = panel.getByRole('form', { name: 'Add a webhook endpoint' });
  const events = form.getByRole('group', { name: 'Events to receive' });
  t.ok(await focused(form.getByLabel('Endpoint URL')), 'focus goes to the URL field');
  await events.getByLabel('Select all').check();
  t.equal(await events.locator('input[name="events"]:checked').count(), WEBHOOK_EVENTS.length, `select all checks every event (${WEBHOOK_EVENTS.length})`);
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
  await shootPanel(page, panel, 'dashboard-webhooks-refused');

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
  await shootPanel(page, panel, 'dashboard-webhooks-new');
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
  await shootPanel(page, panel, 'dashboard-webhooks-panel');

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
  await shootPanel(page, panel, 'dashboard-webhooks-disabled');
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
  t.ok(await focused(remove), 'Escape cancels; focus returns to the button');
  await page.keyboard.press('Enter');
  await deleteDialog.getByRole('button', { name: 'Delete endpoint' }).click();
  await item.waitFor({ state: 'detached' });
  await panel.getByText('No endpoint yet.').waitFor();
  t.ok(await focused(panel.locator('#hooks-title')), 'focus moves to the panel heading');
  t.notMatch(await page.content(), rotated, 'the secret is no longer on the page');
  t.same(problems, [], 'no script error and no CSP violation');
});

if (!chromiumMissing(t, 'dashboard webhook edit and deliveries test'))
t.test('an endpoint is edited (URL and events), its failed test shows in its deliveries, and a retry after the fix succeeds', async (t) => {
  const { page, problems } = await dashboardPage(t, base);
  const panel = await withApp(page);
  const first = 'https://hooks.example.com/chat';

  // Added with one event, to a public address.
  await panel.getByRole('button', { name: 'New endpoint', exact: true }).click();
  const add = panel.getByRole('form', { name: 'Add a webhook endpoint' });
  await add.getByLabel('Endpoint URL').fill(first);
  await add.getByRole('group', { name: 'Events to receive' }).getByLabel('message.new', { exact: true }).check();
  await add.getByRole('button', { name: 'Add endpoint' }).click();
  const secret = await panel.getByRole('textbox', { name: 'Signing secret of the new endpoint' }).inputValue();
  await panel.getByRole('button', { name: 'I have stored it' }).click();
  const item = panel.locator('li.hook').first();
  await item.locator('h3', { hasText: first }).waitFor();

  // Edit: the form holds the endpoint as it is; what the service refuses is shown under its field.
  const edit = item.getByRole('button', { name: `Edit ${first}` });
  await edit.click();
  t.equal(await edit.getAttribute('aria-expanded'), 'true', 'the Edit button says its form is open');
  const form = item.getByRole('form', { name: `Edit ${first}` });
  const url = form.getByLabel('Endpoint URL');
  t.equal(await url.inputValue(), first, 'the form starts from the current URL');
  t.ok(await focused(url), 'focus goes to the URL field');
  const events = form.getByRole('group', { name: 'Events to receive' });
  t.equal(await events.getByLabel('message.new', { exact: true }).isChecked(), true, 'and the current events');
  await events.getByLabel('message.new', { exact: true }).uncheck();
  await form.getByRole('button', { name: 'Save changes' }).click();
  await form.locator('fieldset.events .field-error').waitFor();
  t.match(await form.locator('fieldset.events .field-error').textContent(), /Choose at least one event/, 'no event: said under the events');
  await url.fill('ftp://hooks.example.com/');
  await events.getByLabel('chat.created', { exact: true }).check();
  await form.getByRole('button', { name: 'Save changes' }).click();
  await t.resolves(url.and(page.locator('[aria-invalid="true"]')).waitFor(), 'a refused URL is marked invalid');
  t.match(await form.locator('.field', { has: page.getByLabel('Endpoint URL') }).locator('.field-error').textContent(), /http:\/\/ or https:\/\/ URL/, 'with its message under it');
  await shootPanel(page, panel, 'dashboard-webhooks-edit');

  await url.fill(flakyUrl);
  await events.getByLabel('member.added', { exact: true }).check();
  await form.getByLabel('Description (optional)').fill('Flaky receiver');
  await form.getByRole('button', { name: 'Save changes' }).click();
  await form.waitFor({ state: 'detached' });
  await item.locator('h3', { hasText: flakyUrl }).waitFor();
  t.same(await item.locator('.event-list code').allTextContents(), ['chat.created', 'member.added'], 'listed with its new events');
  t.match(await item.textContent(), /Flaky receiver/, 'and its description');
  t.ok(await focused(item.getByRole('button', { name: `Edit ${flakyUrl}` })), 'focus is back on its Edit button');

  // A test the receiver refuses: the deliveries view lists it, failed, with a Retry button.
  await item.getByRole('button', { name: `Send test event to ${flakyUrl}` }).click();
  await item.getByRole('status').filter({ hasText: /^Not delivered: HTTP 500/ }).waitFor();
  await item.getByRole('button', { name: `Show deliveries of ${flakyUrl}` }).click();
  const log = item.locator('section.delivery-log');
  await t.resolves(page.waitForFunction(() => document.activeElement?.textContent === 'Recent deliveries', undefined, { timeout: 5000 }), 'focus goes to the deliveries heading');
  const rows = log.locator('tbody tr');
  await rows.first().waitFor();
  t.equal(await rows.count(), 1, 'one attempt');
  const failedRow = rows.first();
  const eventId = flaky.got[0]!.headers['webhook-id'] as string;
  t.match(await failedRow.locator('[data-label="Event"]').textContent(), `webhook.test ${eventId}`, 'its type and event id (the webhook-id it carried)');
  t.equal((await failedRow.locator('[data-label="Attempt"]').textContent())?.trim(), '1');
  t.match(await failedRow.locator('[data-label="Status"]').textContent(), /FAILED\s*500/, 'failed, with the status code');
  t.match(await failedRow.locator('[data-label="Error"]').textContent(), /HTTP 500/, 'and why');
  t.match(await failedRow.locator('[data-label="Duration"]').textContent(), /^\d+ ms$/);
  t.match(await failedRow.locator('[data-label="Time"] time').getAttribute('datetime'), /^\d{4}-\d\d-\d\dT/);
  await shootPanel(page, panel, 'dashboard-webhooks-deliveries');

  // Fixed receiver: the retry is delivered with the same webhook-id, and listed on top as attempt 2.
  flaky.status = 204;
  await failedRow.getByRole('button', { name: `Retry attempt 1 of ${eventId}` }).click();
  await log.getByRole('status').filter({ hasText: /^Retried: delivered, HTTP 204 in \d+ ms\.$/ }).waitFor();
  await rows.nth(1).waitFor();
  t.equal(flaky.got.length, 2, 'the receiver got the event again');
  t.equal(flaky.got[1]!.headers['webhook-id'], eventId, 'with the same webhook-id');
  t.equal(flaky.got[1]!.body, flaky.got[0]!.body, 'and the same body');
  t.ok(verifies(flaky.got[1]!, secret), 'signed with the endpoint secret');
  t.match(await rows.first().locator('[data-label="Status"]').textContent(), /SUCCEEDED\s*204/, 'the retry is listed first, succeeded');
  t.equal((await rows.first().locator('[data-label="Attempt"]').textContent())?.trim(), '2', 'as attempt 2');
  t.equal(await rows.first().getByRole('button', { name: /^Retry/ }).count(), 0, 'a succeeded attempt has no Retry button');
  await shootPanel(page, panel, 'dashboard-webhooks-retried');

  // A later test shows in the open log without asking.
  await item.getByRole('button', { name: `Send test event to ${flakyUrl}` }).click();
  await rows.nth(2).waitFor();
  t.equal(await rows.count(), 3, 'the new test is listed');
  t.same(problems, [], 'no script error and no CSP violation');
});
