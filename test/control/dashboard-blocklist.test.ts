import t from 'tap';
import { chromiumMissing, dashboardPage, reloadAndReadWhenShown, shootPanel, signUpWithApp } from '../helpers/dashboard-page.ts';
import { client, removeDir, startService } from '../helpers/index.ts';

// The dashboard's blocklist panel in headless Chromium, driven the way a person does it: words
// typed one a line into the two lists, an entry the service refuses named by its line, the list
// saved and still there after a reload, and then applied by the node to a user's sends.

const svc = await startService();
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});
const base = svc.controlUrl;

if (!chromiumMissing(t, 'dashboard blocklist test'))
t.test('words are typed into the blocklist, a refused line is named, the list is saved, kept and applied by the node', async (t) => {
  const { page, problems } = await dashboardPage(t, base);
  const email = `blocklist-${Date.now()}@acme.example`;
  const password = 'correct horse battery staple';
  const appId = await signUpWithApp(page, base, email, password);

  const panel = page.locator('section[aria-labelledby="blocklist-title"]');
  const block = panel.getByLabel(/Refuse messages containing/);
  const mask = panel.getByLabel(/Star out/);
  await page.locator('section[aria-labelledby="blocklist-title"][aria-busy="false"]').waitFor();
  t.equal(await block.inputValue(), '', 'empty at first');
  await block.fill('scam\n\n  free money  \n\u0301');
  await mask.fill('darn');
  t.match(await panel.locator('.actions .muted').textContent(), /^4 of 10,000 entries$/, 'blank lines do not count');
  await panel.getByRole('button', { name: 'Save blocklist' }).click();
  await t.resolves(block.and(page.locator('[aria-invalid="true"]')).waitFor(), 'the refused list is marked invalid');
  t.match(await panel.locator('#blocklist-block-error').textContent(), /^Line 4 \(“\u0301”\) has no letter, digit or symbol left once diacritics are set aside\.$/, 'its line is named under it');
  t.match(await panel.getByRole('alert').last().textContent(), /see the message under the field/, 'the form points to it');
  t.equal(await mask.getAttribute('aria-invalid'), null, 'the other list is not marked');
  await shootPanel(page, panel, 'dashboard-blocklist-refused');

  await block.fill('scam\n\n  free money  ');
  t.equal(await block.getAttribute('aria-invalid'), null, 'editing clears the mark');
  await panel.getByRole('button', { name: 'Save blocklist' }).click();
  await panel.getByRole('status').getByText('Saved: 3 entries.').waitFor();
  await shootPanel(page, panel, 'dashboard-blocklist-saved');

  const firstSight = await reloadAndReadWhenShown(page, 'Last changed', ['blocklist-block', 'blocklist-mask']);
  t.same(firstSight, { 'blocklist-block': 'scam\nfree money', 'blocklist-mask': 'darn' }, 'the fields hold the stored list in the render that shows it loaded');
  await panel.getByText(/Last changed/).waitFor();
  t.equal(await block.inputValue(), 'scam\nfree money', 'kept across a reload (trimmed, blank lines dropped)');
  t.equal(await mask.inputValue(), 'darn');

  // The node applies it to a user's sends.
  const control = client(base);
  const token = (await control.post('/api/auth/login', { email, password })).body.accessToken as string;
  const apiKey = (await control.post(`/api/client/apps/${appId}/keys`, undefined, token)).body.token as string;
  const node = client(svc.nodeUrl);
  const userId = async (username: string) => (await node.post('/api/users', { username }, apiKey)).body.userId as string;
  const [ann, ben] = [await userId('ann'), await userId('ben')];
  const jwt = (await node.post('/api/users/signin', { userId: ann }, apiKey)).body.jwt as string;
  const chatId = (await node.post('/api/chats', { type: 'direct', userId: ben }, jwt)).body.chatId as string;
  t.equal((await node.post(`/api/messages/${chatId}`, { content: 'FREE   money here' }, jwt)).body.code, 'CONTENT_BLOCKED', 'a blocked phrase is refused');
  t.equal((await node.post(`/api/messages/${chatId}`, { content: 'oh darn' }, jwt)).body.message.content, 'oh ****', 'a masked word is starred out');
  t.match((await node.get('/api/moderation/actions?size=1', apiKey)).body.actions, [{ action: 'blocklist.updated', by: /^account:/, reason: '3 entries' }], 'recorded as the account');
  t.same(problems, [], 'no page error');
});
