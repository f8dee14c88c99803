import t from 'tap';
import { chromiumMissing } from '../helpers/dashboard-page.ts';
import { ARTIFACTS, demoApp, newGroup, person } from '../helpers/demo-page.ts';

// The reference app's mentions and pins, driven by two people in headless Chromium, with
// screenshots in artifacts/: "@" offers the members, a mention shows as a badge on the other's
// list and marks the message; an owner pins a message and every member sees it in the pins panel.
if (!chromiumMissing(t, 'reference app test'))
t.test('an @-mention picked from the members reaches its member as a badge; a pin shows for both', { timeout: 120_000 }, async (t) => {
  const { svc, browser } = await demoApp(t);
  const { page: bob, errors: bobErrors } = await person(browser, svc.urls.demo!, 'bob');
  const { page: alice, errors: aliceErrors } = await person(browser, svc.urls.demo!, 'alice');

  await newGroup(alice, 'Launch', 'bob');
  await alice.waitForFunction(() => document.querySelector('.conv-sub')?.textContent?.startsWith('2 members'));
  await alice.locator('.message-input').pressSequentially('@b');
  await alice.waitForSelector('.mention-picker .mention-option:text-is("@bob")');
  await alice.screenshot({ path: `${ARTIFACTS}demo-mention-picker.png` });
  await alice.click('.mention-option:text-is("@bob")');
  t.equal(await alice.inputValue('.message-input'), '@bob ', 'picking puts the name in the text');
  await alice.locator('.message-input').pressSequentially('please review the plan');
  await alice.press('.message-input', 'Enter');
  await alice.waitForSelector('.msg[data-seq="1"]');

  await bob.waitForSelector('.chat-row .badge.mention:text-is("@1")');
  t.pass("bob's list shows the mention as a badge");
  await bob.screenshot({ path: `${ARTIFACTS}demo-mention-badge.png` });
  await bob.click('.chat-row:has(.badge.mention)');
  await bob.waitForSelector('.msg.for-me[data-seq="1"]');
  t.pass('the message that mentions bob stands out for him');
  await bob.waitForFunction(() => !document.querySelector('.chat-row .badge.mention'));
  t.pass('reading it clears the mention badge');
  t.equal(await alice.locator('.msg.for-me').count(), 0, 'it does not stand out for its sender');

  // Pins: the owner pins, both see it; a plain member has no Pin action.
  t.equal(await bob.locator('.msg[data-seq="1"] .pin').count(), 0, 'a plain member of a group cannot pin');
  await alice.click('.msg[data-seq="1"] .pin');
  await alice.waitForSelector('.msg[data-seq="1"] .pinned');
  await bob.waitForSelector('.msg[data-seq="1"] .pinned');
  t.pass('the pin shows on the message for both');
  await bob.click('.pins-toggle');
  await bob.waitForSelector('.pins .pin-row:has-text("please review the plan")');
  t.match(await bob.textContent('.pins .pin-row'), /pinned by alice/, 'the pins panel lists it, with who pinned it');
  await bob.screenshot({ path: `${ARTIFACTS}demo-pins.png` });
  await alice.click('.msg[data-seq="1"] .pin:text-is("Unpin")');
  await bob.waitForSelector('.pins p:has-text("Nothing pinned yet")');
  t.pass('unpinned: the panel empties for the other member too');
  t.same([...aliceErrors, ...bobErrors], [], 'no page errors');
});
