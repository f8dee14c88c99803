import { mkdirSync } from 'node:fs';
import type { Test } from 'tap';
import type { Browser, Page } from 'playwright-core';
import { freePort, startService, type Running } from '../../bin/spawn.ts';
import { launchChromium } from './dashboard-page.ts';

/** Where the reference app's tests write their screenshots. */
export const ARTIFACTS = new URL('../../artifacts/', import.meta.url).pathname;

/**
 * The reference app (`npm run demo`: control, node and the app's page) on ports of its own, and a
 * headless Chromium to use it with; both end with `t`.
 */
export async function demoApp(t: Test, env: Record<string, string> = {}): Promise<{ svc: Running; browser: Browser }> {
  const ports = { CONTROL_PORT: String(await freePort()), NODE_PORT: String(await freePort()), DEMO_PORT: String(await freePort()) };
  const svc = await startService({ ...ports, ...env }, undefined, { script: 'demo/serve.ts', services: ['control', 'node', 'demo'] });
  t.teardown(() => svc.stop());
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  mkdirSync(ARTIFACTS, { recursive: true });
  return { svc, browser };
}

/** The reference app's page, as a person uses it: signs in as `name` and waits for the app. */
export async function person(browser: Browser, url: string, name: string, viewport = { width: 1280, height: 860 }): Promise<{ page: Page; errors: string[] }> {
  const page = await (await browser.newContext({ viewport })).newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`${name}: ${String(e)}`));
  await page.goto(url);
  await page.fill('#username', name);
  await page.click('.sign-in button[type=submit]');
  await page.waitForSelector('body[data-ready="true"]');
  return { page, errors };
}

export async function say(page: Page, text: string) {
  await page.fill('.message-input', text);
  await page.press('.message-input', 'Enter');
}

/**
 * Creates a group named `name` with `member` through the new-chat form, and waits for it to open
 * and for the form to close (the next click on the toggle must open the form, not close it).
 */
export async function newGroup(page: Page, name: string, member: string) {
  await page.click('.new-chat-toggle');
  await page.check('.new-chat input[value="group"]');
  await page.fill('.new-chat input[name="group-name"]', name);
  await page.check(`.new-chat label:has-text("${member}") input`);
  await page.click('.new-chat button[type=submit]');
  await page.waitForSelector(`.conv-title:has-text("${name}")`);
  await page.waitForSelector('.new-chat', { state: 'detached' });
}

