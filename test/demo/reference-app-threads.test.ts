import sharp from 'sharp';
import t from 'tap';
import { chromiumMissing, PHONE } from '../helpers/dashboard-page.ts';
import { ARTIFACTS, demoApp, newGroup, person } from '../helpers/demo-page.ts';

// The reference app's threads, driven by two people in headless Chromium, with screenshots in
// artifacts/: a thread opens beside the chat, replies there raise the parent's reply count for
// both, the other's threads inbox shows the thread with an unread badge, which reading clears;
// a reply sent "also to the chat" is in both.
if (!chromiumMissing(t, 'reference app test'))
t.test('a thread beside the chat: replies, the count on the parent, the inbox with its unread badge', { timeout: 120_000 }, async (t) => {
  const { svc, browser } = await demoApp(t);
  const { page: bob, errors: bobErrors } = await person(browser, svc.urls.demo!, 'bob');
  const { page: alice, errors: aliceErrors } = await person(browser, svc.urls.demo!, 'alice');

  await newGroup(alice, 'Launch', 'bob');
  await alice.waitForFunction(() => document.querySelector('.conv-sub')?.textContent?.startsWith('2 members'));
  await alice.locator('.message-input').fill('Which day do we ship?');
  await alice.press('.message-input', 'Enter');
  await alice.waitForSelector('.msg[data-seq="1"]');

  // Bob answers in a thread: the pane opens beside the chat.
  await bob.click('.chat-row:has-text("Launch")');
  await bob.click('.msg[data-seq="1"] .open-thread');
  await bob.waitForSelector('.thread-pane .msg.parent:has-text("Which day do we ship?")');
  for (const text of ['Thursday works for me', 'Or Friday morning']) {
    await bob.locator('.reply-input').fill(text);
    await bob.press('.reply-input', 'Enter');
    await bob.waitForSelector(`.thread-pane .msg.reply:has-text("${text}")`);
  }
  t.equal(await bob.locator('.thread-pane .msg.reply').count(), 2, 'the replies are in the thread');
  t.equal(await bob.locator('.log .msg').count(), 1, 'and not in the chat');
  await bob.waitForSelector('.log .msg[data-seq="1"] .thread-summary:has-text("2 replies")');
  t.pass("the parent shows its reply count in the replier's chat");
  await bob.screenshot({ path: `${ARTIFACTS}demo-thread-pane.png` });

  // Alice, the parent's author, follows it: the count on her message, the inbox badge.
  await alice.waitForSelector('.log .msg[data-seq="1"] .thread-summary:has-text("2 replies")');
  t.pass("the author's chat shows the count too, live");
  await alice.waitForSelector('.threads-tab .badge:text-is("1")');
  t.pass('her Threads tab counts one thread with unread replies');
  await alice.click('.threads-tab');
  await alice.waitForSelector('.inbox-row:has-text("Which day do we ship?") .badge:text-is("2")');
  t.pass('the inbox lists the thread with its two unread replies');
  await alice.screenshot({ path: `${ARTIFACTS}demo-threads-inbox.png` });
  await alice.click('.inbox-row');
  await alice.waitForSelector('.thread-pane .msg.reply:has-text("Or Friday morning")');
  await alice.waitForFunction(() => !document.querySelector('.threads-tab .badge'));
  t.pass('opening the thread reads it: the badge goes');

  // Bob stops following: his pane has the thread open, so its replies still come to it live.
  await bob.click('.thread-pane .follow[aria-pressed="true"]');
  await bob.waitForSelector('.thread-pane .follow[aria-pressed="false"]');
  await alice.locator('.reply-input').fill('Friday as a backup');
  await alice.press('.reply-input', 'Enter');
  await bob.waitForSelector('.thread-pane .msg.reply:has-text("Friday as a backup")');
  t.pass('a member who no longer follows the thread gets its replies live while it is open beside the chat');

  // A file as a reply: uploaded from the pane, its thumbnail in both panes.
  const photo = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#e94' } }).png().toBuffer();
  await alice.setInputFiles('.thread-pane .reply-file', { name: 'venue.png', mimeType: 'image/png', buffer: photo });
  const thumb = (page: typeof alice) =>
    page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLImageElement>('.thread-pane .msg.reply .attachment.image img.thumb')).some((img) => img.complete && img.naturalWidth > 0), undefined, { timeout: 30_000 });
  await Promise.all([thumb(alice), thumb(bob)]);
  t.pass("a file sent as a reply from the thread pane shows its thumbnail in both members' panes");
  await bob.screenshot({ path: `${ARTIFACTS}demo-thread-file.png` });

  // A reply also sent to the chat is in both.
  await alice.locator('.reply-input').fill('Thursday it is');
  await alice.check('.also-in-chat input');
  await alice.press('.reply-input', 'Enter');
  await alice.waitForSelector('.thread-pane .msg.reply:has-text("Thursday it is")');
  await alice.waitForSelector('.log .msg:has-text("Thursday it is") .in-thread');
  t.pass("a reply also sent to the chat shows in the chat's timeline, marked as a thread reply");
  await bob.waitForSelector('.thread-pane .msg.reply:has-text("Thursday it is")');
  await bob.waitForSelector('.log .msg:has-text("Thursday it is")');
  t.pass('and reaches the other member in both');
  await alice.setViewportSize(PHONE);
  await alice.screenshot({ path: `${ARTIFACTS}demo-thread-phone.png` });
  t.same([...aliceErrors, ...bobErrors], [], 'no page errors');
});
