import { existsSync, mkdirSync } from 'node:fs';
import t from 'tap';
import { chromium, type Page } from 'playwright-core';
import { freePort, startService } from '../helpers/index.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = new URL('../../artifacts/', import.meta.url).pathname;

/** Sequence numbers of the messages a page shows, in display order. */
const shown = (page: Page) => page.$$eval('#log .msg', (els) => els.map((e) => Number((e as HTMLElement).dataset.seq)));
const texts = (page: Page) => page.$$eval('#log .msg .text', (els) => els.map((e) => e.textContent ?? ''));

async function signIn(page: Page, url: string, name: string, friend: string) {
  await page.goto(url);
  await page.fill('#name', name);
  await page.click('#signin');
  await page.waitForSelector('body[data-ready="true"]');
  await page.fill('#friend', friend);
  await page.click('#start');
  await page.waitForSelector('#composer:not([hidden])');
}

async function say(page: Page, text: string) {
  await page.fill('#text', text);
  await page.press('#text', 'Enter');
}

if (!existsSync(CHROMIUM)) {
  // Outside CI the suite says loudly what it skipped; in CI a missing browser is a failure.
  if (process.env.CI === 'true') throw new Error(`no Chromium at ${CHROMIUM}: .ci/run installs Debian's chromium package`);
  t.comment(`SKIPPED browser test: no Chromium at ${CHROMIUM}. Install it with: apt-get install chromium (or set CHROMIUM_PATH)`);
  t.pass('browser test skipped (no Chromium); see the comment above');
} else
t.test('two browsers chat through the demo page, across a server restart, losing and repeating nothing', async (t) => {
  const env = {
    CONTROL_PORT: String(await freePort()),
    NODE_PORT: String(await freePort()),
    DEMO_PORT: String(await freePort()),
  };
  const run = { script: 'sdk/demo/serve.ts', services: ['control', 'node', 'demo'] };
  let svc = await startService(env, undefined, run);
  t.teardown(() => svc.stop());
  const url = svc.urls.demo!;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  t.teardown(() => browser.close());
  const alice = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  const bob = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  await signIn(alice, url, 'alice', 'bob');
  await signIn(bob, url, 'bob', 'alice');

  for (let i = 0; i < 3; i++) {
    await say(alice, `alice ${i}`);
    await say(bob, `bob ${i}`);
  }
  for (const page of [alice, bob]) await page.waitForFunction(() => document.querySelectorAll('#log .msg').length === 6);

  // Typing reaches the other page.
  await alice.type('#text', 'typing…');
  await bob.waitForSelector('#typing:has-text("is typing")');
  await alice.fill('#text', '');

  await svc.kill();
  await alice.waitForSelector('#status:has-text("reconnecting")');
  await say(alice, 'sent while the server was down');
  svc = await startService(env, svc.dataDir, run);
  for (const page of [alice, bob]) await page.waitForSelector('#status:has-text(": open")', { timeout: 20_000 });
  await say(bob, 'after the restart');
  await say(alice, 'and one more');
  for (const page of [alice, bob]) await page.waitForFunction(() => document.querySelectorAll('#log .msg').length === 9, undefined, { timeout: 20_000 });

  // A reaction shows on both pages.
  await bob.click('#log .msg:first-child .like');
  for (const page of [alice, bob]) await page.waitForSelector('#log .msg:first-child .reactions button:has-text("👍 1")');

  for (const [name, page] of [['alice', alice], ['bob', bob]] as const) {
    const seqs = await shown(page);
    t.same(seqs, [1, 2, 3, 4, 5, 6, 7, 8, 9], `${name} shows every message once, in order`);
    const all = await texts(page);
    t.ok(all.includes('sent while the server was down'), `${name} has the message sent during the outage`);
    t.equal(new Set(all).size, all.length, `${name} shows no duplicate`);
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  await alice.screenshot({ path: `${ARTIFACTS}browser-chat-alice.png` });
  await bob.screenshot({ path: `${ARTIFACTS}browser-chat-bob.png` });
});
