import { mkdirSync } from 'node:fs';
import t from 'tap';
import type { Page } from 'playwright-core';
import { ChatClient } from '../../sdk/client.ts';
import { chromiumMissing, launchChromium, PHONE } from '../helpers/dashboard-page.ts';
import { freePort, startService } from '../helpers/index.ts';
import { newGroup, person, say } from '../helpers/demo-page.ts';

// The reference app (demo/, `npm run demo`) driven by two people in headless Chromium: everything
// the README says it does, through clicks and keys, with screenshots in artifacts/.
const ARTIFACTS = new URL('../../artifacts/', import.meta.url).pathname;
const HISTORY = 500;

const seqs = (page: Page) => page.$$eval('.log .msg[data-seq]', (els) => els.map((e) => Number((e as HTMLElement).dataset.seq)));
const row = (page: Page, title: string) => page.locator('.chat-row', { has: page.locator('.chat-title', { hasText: title }) });

if (!chromiumMissing(t, 'reference app test'))
t.test('two people use the reference app: chats, 500 messages of history, typing, presence, seen, edits, reactions, a lost connection', { timeout: 240_000 }, async (t) => {
  const env = { CONTROL_PORT: String(await freePort()), NODE_PORT: String(await freePort()), DEMO_PORT: String(await freePort()), USER_SENDS_PER_SECOND: '1000', USER_REQUESTS_PER_SECOND: '1000' };
  const run = { script: 'demo/serve.ts', services: ['control', 'node', 'demo'] };
  let svc = await startService(env, undefined, run);
  t.teardown(() => svc.stop());
  const url = svc.urls.demo!;
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  mkdirSync(ARTIFACTS, { recursive: true });

  const { page: bob, errors: bobErrors } = await person(browser, url, 'bob');
  const { page: alice, errors: aliceErrors } = await person(browser, url, 'alice');

  // A direct chat, with member picking; the other side's list shows it live, with presence.
  await alice.click('.new-chat-toggle');
  await alice.check('.new-chat label:has-text("bob") input');
  await alice.click('.new-chat button[type=submit]');
  await alice.waitForSelector('.conv-title:has-text("bob")');
  await alice.waitForSelector('.conv-sub:text-is("online")');
  t.pass('alice sees bob online');
  await row(bob, 'alice').waitFor();
  await bob.waitForSelector('.chat-row .dot.on');
  t.pass("bob's list shows the new chat, named by its peer, with alice online");

  // 500 messages from alice's backend-side client (a script, to be quick): bob's badge counts them live.
  // One after another over REST they can pass 200 requests a second on a fast machine: the env allows it.
  const session = (await (await fetch(`${url}/demo/signin`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'alice' }) })).json()) as { jwt: string; refreshToken: string; userId: string; baseUrl: string };
  // Never connected: its sends go over REST.
  const script = new ChatClient({ baseUrl: session.baseUrl });
  script.setAuth(session);
  const chatId = await alice.getAttribute('.chat-row[aria-current="true"]', 'data-chat');
  for (let i = 1; i <= HISTORY; i++) await script.send(chatId!, `message ${i}`);
  await bob.waitForSelector(`.chat-row .badge:text-is("${HISTORY}")`);
  t.pass(`bob's unread badge counted ${HISTORY} messages as they came`);
  t.equal(await alice.locator('.chat-row .badge').count(), 0, 'alice has no unread badge for her own messages');

  // Bob opens the chat and scrolls back through all of it, a page at a time.
  await row(bob, 'alice').click();
  await bob.waitForSelector(`.msg[data-seq="${HISTORY}"]`);
  await bob.waitForFunction(() => !document.querySelector('.chat-row .badge'));
  t.ok((await seqs(bob)).length < HISTORY, 'the chat opens on its newest page only');
  let pages = 0;
  while (!(await bob.isVisible('.history-start'))) {
    const before = (await seqs(bob)).length;
    await bob.$eval('.log', (el) => el.scrollTo(0, 0));
    await bob.waitForFunction((n) => document.querySelectorAll('.log .msg[data-seq]').length > n || !!document.querySelector('.history-start'), before);
    if (++pages > 40) break;
  }
  t.same(await seqs(bob), Array.from({ length: HISTORY }, (_, i) => i + 1), 'all 500, each once, in order');
  t.ok(pages >= 10, `loaded older pages as bob scrolled up (${pages} scrolls)`);
  await alice.waitForSelector(`.msg[data-seq="${HISTORY}"] .seen:text-is("Seen")`);
  t.pass('alice sees her newest message seen');

  // Typing reaches the other person only.
  await bob.locator('.message-input').pressSequentially('repl');
  await alice.waitForSelector('.typing:has-text("bob is typing")');
  t.equal(await bob.textContent('.typing'), '', 'bob is not told that he is typing');
  await bob.fill('.message-input', '');

  // Reply, react and take back, edit, delete.
  await bob.click(`.msg[data-seq="${HISTORY}"] .reply`);
  await say(bob, 'a reply from bob');
  const reply = alice.locator('.msg', { hasText: 'a reply from bob' });
  await reply.locator('.quote:has-text("message 500")').waitFor();
  await reply.locator('.react').click();
  await reply.locator('.pick:text-is("👍")').click();
  for (const page of [alice, bob]) await page.locator('.msg', { hasText: 'a reply from bob' }).locator('.chip:has-text("👍 1")').waitFor();
  await reply.locator('.chip:has-text("👍 1")').click();
  for (const page of [alice, bob]) await page.locator('.msg', { hasText: 'a reply from bob' }).locator('.chip').waitFor({ state: 'detached' });
  t.pass('a reaction shows on both pages, and goes from both when taken back');
  await alice.click(`.msg[data-seq="${HISTORY}"] .edit`);
  await alice.fill('.message-input', 'message 500, edited');
  await alice.press('.message-input', 'Enter');
  await alice.click(`.msg[data-seq="${HISTORY - 1}"] .delete`);
  await alice.click(`.msg[data-seq="${HISTORY - 1}"] .confirm-delete`);
  for (const page of [alice, bob]) {
    await page.waitForSelector(`.msg[data-seq="${HISTORY}"] .text:text-is("message 500, edited")`);
    await page.waitForSelector(`.msg[data-seq="${HISTORY}"] .edited`);
    await page.waitForSelector(`.msg.deleted[data-seq="${HISTORY - 1}"] .text:has-text("Message deleted")`);
  }
  t.pass('an edit and a delete show on both pages');
  await alice.screenshot({ path: `${ARTIFACTS}demo-desktop-alice.png` });

  // A group, picked by name; bob's list gets it live, and its badge counts while he is elsewhere.
  await newGroup(alice, 'Team', 'bob');
  await say(alice, 'hello team');
  await row(bob, 'Team').locator('.badge:text-is("1")').waitFor();
  t.match(await row(bob, 'Team').textContent(), /2 members/, 'the group shows its member count');
  await row(bob, 'Team').click();
  await bob.waitForSelector('.msg:has-text("hello team")');
  await alice.waitForSelector('.msg:has-text("hello team") .seen:text-is("Seen by bob")');
  t.pass('alice sees who has seen her message in the group');
  await bob.screenshot({ path: `${ARTIFACTS}demo-desktop-bob.png` });

  // The service goes away and comes back: banners, a message sent meanwhile goes out once.
  await svc.kill();
  for (const page of [alice, bob]) await page.waitForSelector('.banner.offline');
  await say(alice, 'sent while offline');
  await alice.waitForSelector('.msg.sending:has-text("sent while offline")');
  await alice.screenshot({ path: `${ARTIFACTS}demo-desktop-offline.png` });
  svc = await startService(env, svc.dataDir, run);
  for (const page of [alice, bob]) {
    await page.waitForSelector('.msg[data-seq]:has-text("sent while offline")', { timeout: 30_000 });
    await page.waitForSelector('.banner.offline', { state: 'detached', timeout: 30_000 });
  }
  for (const page of [alice, bob]) t.same(await seqs(page), [1, 2], 'the group shows both messages once, in order, after the resume');

  // On a phone: the list, then the chat full-width with a way back.
  const { page: phone, errors: phoneErrors } = await person(browser, url, 'bob', PHONE);
  await row(phone, 'alice').waitFor();
  await phone.screenshot({ path: `${ARTIFACTS}demo-phone-list.png` });
  await row(phone, 'alice').click();
  await phone.waitForSelector(`.msg[data-seq="${HISTORY}"]`);
  t.notOk(await phone.isVisible('.sidebar'), 'on a phone the open chat takes the whole width');
  await phone.screenshot({ path: `${ARTIFACTS}demo-phone-chat.png` });
  await phone.click('.back');
  await phone.waitForSelector('.sidebar');
  await phone.context().close();

  // Bob leaves: alice's list shows him offline.
  await bob.context().close();
  await alice.waitForSelector('.chat-row .dot:not(.on)');
  t.pass('alice sees bob go offline');
  t.same([...aliceErrors, ...bobErrors, ...phoneErrors], [], 'no page error on any page');
  await script.close();
});

if (!chromiumMissing(t, 'reference app read mark test'))
t.test('a read mark refused under load is sent again: the sender still sees "Seen by"', { timeout: 120_000 }, async (t) => {
  const env = { CONTROL_PORT: String(await freePort()), NODE_PORT: String(await freePort()), DEMO_PORT: String(await freePort()), USER_WRITES_PER_SECOND: '2' };
  const svc = await startService(env, undefined, { script: 'demo/serve.ts', services: ['control', 'node', 'demo'] });
  t.teardown(() => svc.stop());
  const url = svc.urls.demo!;
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const { page: bob, errors: bobErrors } = await person(browser, url, 'bob');
  const { page: alice, errors: aliceErrors } = await person(browser, url, 'alice');
  await newGroup(alice, 'Busy', 'bob');
  await say(alice, 'are you there');
  await row(bob, 'Busy').click();
  await alice.waitForSelector('.msg:has-text("are you there") .seen:text-is("Seen by bob")');
  const chatId = await row(bob, 'Busy').getAttribute('data-chat');

  // Bob has the chat open. His own backend spends his write budget (2 a second, counted in
  // windows of a second), taking each new window's budget within 20 ms of its start, while a
  // message arrives: his page's read mark for it is refused with RATE_LIMITED and a retry hint.
  const session = (await (await fetch(`${url}/demo/signin`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'bob' }) })).json()) as { jwt: string; baseUrl: string };
  const mark = () => fetch(`${session.baseUrl}/api/chats/${chatId}/read`, { method: 'POST', headers: { authorization: `Bearer ${session.jwt}`, 'content-type': 'application/json' }, body: '{"seq":0}' }).then((r) => r.status);
  const statuses: number[] = [];
  while (!statuses.includes(429) && statuses.length < 20) statuses.push(await mark());
  t.ok(statuses.includes(429), `the budget is spent (${statuses.join(', ')})`);
  const until = Date.now() + 2500;
  const spending = (async () => {
    while (Date.now() < until) {
      void Promise.all([mark(), mark(), mark()]).then((s) => statuses.push(...s));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  await say(alice, 'still there?');
  await bob.waitForSelector('.msg:has-text("still there?")');
  await spending;
  t.ok(statuses.filter((s) => s === 429).length > 100, 'the budget stayed spent while the message arrived');
  await alice.waitForSelector('.msg:has-text("still there?") .seen:text-is("Seen by bob")', { timeout: 15_000 });
  t.pass('the mark went through once the budget allowed it');
  t.same([...aliceErrors, ...bobErrors], [], 'no page error');
});

if (!chromiumMissing(t, 'reference app reload test'))
t.test('a chat that opens while a read mark and a message arrive keeps both: the load does not undo them', { timeout: 120_000 }, async (t) => {
  const svc = await startService({ CONTROL_PORT: String(await freePort()), NODE_PORT: String(await freePort()), DEMO_PORT: String(await freePort()) }, undefined, { script: 'demo/serve.ts', services: ['control', 'node', 'demo'] });
  t.teardown(() => svc.stop());
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const { page: bob, errors: bobErrors } = await person(browser, svc.urls.demo!, 'bob');
  const { page: alice, errors: aliceErrors } = await person(browser, svc.urls.demo!, 'alice');
  // The form closes once the chat exists, not once its history has loaded: a slow load does not
  // hold it open (a click on the toggle meanwhile would close it instead of opening a new one).
  let holdLoad!: () => void;
  const loadHeld = new Promise<void>((resolve) => (holdLoad = resolve));
  await alice.route((u) => u.pathname.includes('/api/messages/getMessages/'), async (route) => {
    await loadHeld;
    await route.continue();
  });
  await newGroup(alice, 'Other', 'bob');
  t.equal(await alice.locator('.new-chat').count(), 0, 'the new-chat form closed while the history was still loading');
  holdLoad();
  await alice.unrouteAll({ behavior: 'wait' });
  await newGroup(alice, 'Slow', 'bob');
  await say(alice, 'one');
  await alice.waitForSelector('.msg[data-seq="1"]:has-text("one")');
  const chatId = (await row(alice, 'Slow').getAttribute('data-chat'))!;
  await row(alice, 'Other').click();
  await alice.waitForSelector('.conv-title:has-text("Other")');

  // Alice opens the chat again on a slow network: the service answers its page and its members
  // (bob has read nothing yet), and the answers reach her page only after bob has read and written.
  let fetched = 0;
  let bothRead!: () => void;
  const read = new Promise<void>((resolve) => (bothRead = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await alice.route((u) => u.pathname.endsWith(`/api/chats/${chatId}/members`) || u.pathname.endsWith(`/api/messages/getMessages/${chatId}`), async (route) => {
    const response = await route.fetch();
    if (++fetched === 2) bothRead();
    await released;
    await route.fulfill({ response });
  });
  await row(alice, 'Slow').click();
  await Promise.race([read, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
  t.equal(fetched, 2, 'the page and the members were read before bob read');
  await row(bob, 'Slow').click();
  await bob.waitForSelector('.msg:has-text("one")');
  await say(bob, 'two');
  await alice.waitForSelector('.msg:has-text("two")');
  release();

  await alice.waitForSelector('.msg[data-seq="1"]:has-text("one")');
  await alice.waitForSelector('.msg:has-text("one") .seen:text-is("Seen by bob")', { timeout: 10_000 });
  t.pass('the read mark that came during the load stays');
  t.same(await seqs(alice), [1, 2], 'the message that came during the load stays, in order');
  t.same([...aliceErrors, ...bobErrors], [], 'no page error');
});

t.test("the page's port opens only once the page and the service behind it answer", async (t) => {
  const port = await freePort();
  const run = { script: 'demo/serve.ts', services: ['demo'] };
  const starting = startService({ DEMO_PORT: String(port) }, undefined, run);
  // Knock until the port takes a connection: the first answer must already be the page.
  let first: Response | undefined;
  for (let i = 0; i < 600 && !first; i++) {
    first = await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined);
    if (!first) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const svc = await starting;
  t.teardown(() => svc.stop());
  t.equal(first?.status, 200, 'the first connection the port took was answered with the page');
  const users = await fetch(`http://127.0.0.1:${port}/demo/users`);
  t.same(await users.json(), { users: [] }, 'and its backend answers');
  const refused = await fetch(`http://127.0.0.1:${port}/demo/signin`, { method: 'POST', body: '{"username": 5}' });
  t.same([refused.status, await refused.json()], [400, { error: 'username: required, a non-empty string' }], 'a bad sign-in is refused with the field and the rule');
});
