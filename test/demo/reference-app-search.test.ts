import t from 'tap';
import { chromiumMissing } from '../helpers/dashboard-page.ts';
import { ARTIFACTS, demoApp, newGroup, person } from '../helpers/demo-page.ts';

// The reference app's message search, driven by two people in headless Chromium: the search box
// lists the hits with the words marked, and a hit opens its chat with the message shown.
if (!chromiumMissing(t, 'reference app test'))
  t.test('searching messages: hits with the words marked, a hit opens its chat at the message', { timeout: 120_000 }, async (t) => {
    const { svc, browser } = await demoApp(t);
    const { page: bob, errors: bobErrors } = await person(browser, svc.urls.demo!, 'bob');
    const { page: alice, errors: aliceErrors } = await person(browser, svc.urls.demo!, 'alice');

    await newGroup(alice, 'Dinner', 'bob');
    for (const text of ['Crème brûlée for dessert?', 'Or the chocolate cake', 'I booked the café for 8']) {
      await alice.locator('.message-input').fill(text);
      await alice.press('.message-input', 'Enter');
      await alice.waitForSelector(`.msg:has-text("${text}")`);
    }

    await bob.fill('.search-input', 'creme');
    const hit = bob.locator('.search-hit', { hasText: 'dessert' });
    await hit.waitFor();
    t.equal(await hit.locator('mark').textContent(), 'Crème', 'the hit marks the word found, folded: creme found Crème');
    await bob.fill('.search-input', 'caf');
    await bob.locator('.search-hit mark', { hasText: 'café' }).waitFor();
    t.equal(await bob.locator('.search-hit').count(), 1, 'a prefix, as one types: caf finds café, and only that message');
    await bob.screenshot({ path: `${ARTIFACTS}demo-search.png` });
    await bob.click('.search-hit');
    await bob.waitForSelector('.conv-title:has-text("Dinner")');
    await bob.waitForSelector('.log .msg.found:has-text("I booked the café for 8")');
    t.pass("the hit opens its chat with the message shown");
    await bob.fill('.search-input', 'nothing-like-this');
    await bob.waitForSelector('.search-results, p.muted:has-text("No messages found")');
    await bob.press('.search-input', 'Escape');
    await bob.waitForSelector('.chat-row:has-text("Dinner")');
    t.pass('Escape clears the search: the chats are back');
    t.same([...aliceErrors, ...bobErrors], [], 'no page errors');
  });
