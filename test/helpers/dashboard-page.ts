import { existsSync, mkdirSync } from 'node:fs';
import type { Test } from 'tap';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };
/** Where the browser tests' screenshots go. */
export const ARTIFACTS = new URL('../../artifacts/', import.meta.url).pathname;

/**
 * Whether the browser tests can run: outside CI a missing Chromium is reported loudly and the
 * suite records one skip (a tap skip, never a pass); under CI=true it throws (`.ci/run` installs
 * Debian's chromium).
 */
export function chromiumMissing(t: Test, suite: string): boolean {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true') throw new Error(`no Chromium at ${CHROMIUM}: .ci/run installs Debian's chromium package`);
  t.comment(`SKIPPED ${suite}: no Chromium at ${CHROMIUM}. Install it with: apt-get install chromium (or set CHROMIUM_PATH)`);
  t.skip(`${suite}: no Chromium at ${CHROMIUM}`, () => undefined);
  return true;
}

/** Headless Chromium without its background traffic (this machine's network is closed). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * A desktop-sized page of headless Chromium with clipboard access to `origin`, closed at the end
 * of `t`. `problems` collects page errors and console errors (a 4xx a page shows in place is not one).
 */
export async function dashboardPage(t: Test, origin: string): Promise<{ page: Page; problems: string[] }> {
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: DESKTOP });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  return { page, problems };
}

/**
 * Whether `locator`'s element has or gets the focus within `timeoutMs`. Pages move focus in an
 * effect, which runs after the render that removed a dialog or showed a form: reading it the moment
 * the DOM changed races with that effect, so this waits for the element's `focus` event.
 */
export function focused(locator: Locator, timeoutMs = 5000): Promise<boolean> {
  return locator.evaluate(
    (el, ms) =>
      new Promise<boolean>((resolve) => {
        if (el === document.activeElement) return resolve(true);
        el.addEventListener('focus', () => resolve(true), { once: true });
        setTimeout(() => resolve(el === document.activeElement), ms);
      }),
    timeoutMs,
  );
}

/**
 * Signs up a new account of company Acme on the dashboard at `origin` and creates the application
 * "Acme chat", whose page is then open; its id.
 */
export async function signUpWithApp(page: Page, origin: string, email: string, password = 'correct horse battery staple'): Promise<string> {
  await page.goto(`${origin}/#/signup`);
  await page.getByLabel('Company name').fill('Acme');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();
  await page.getByLabel('Application name').fill('Acme chat');
  await page.getByRole('button', { name: 'Create application' }).click();
  await page.getByRole('heading', { level: 1, name: 'Acme chat' }).waitFor();
  return /#\/apps\/([0-9a-f-]+)/.exec(page.url())![1]!;
}

/** Screenshots of `panel` at desktop and phone widths: `artifacts/<name>-desktop.png` and `-phone.png`. */
export async function shootPanel(page: Page, panel: Locator, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await panel.screenshot({ path: `${ARTIFACTS}${name}-desktop.png` });
  await page.setViewportSize(PHONE);
  await panel.screenshot({ path: `${ARTIFACTS}${name}-phone.png` });
  await page.setViewportSize(DESKTOP);
}

/**
 * Reloads `page` and gives the values of the fields with these ids in the first DOM state where
 * `text` is shown: a field filled by an effect after the render that shows the loaded value reads
 * empty here, however quick the effect (a MutationObserver's callback runs before any effect).
 */
export async function reloadAndReadWhenShown(page: Page, text: string, ids: string[]): Promise<Record<string, string | undefined>> {
  await page.addInitScript(
    ({ text, ids }) => {
      const seen = new MutationObserver(() => {
        if (!document.body?.textContent?.includes(text)) return;
        seen.disconnect();
        (window as unknown as { firstSight: Record<string, string | undefined> }).firstSight = Object.fromEntries(ids.map((id) => [id, (document.getElementById(id) as HTMLInputElement | null)?.value]));
      });
      seen.observe(document, { childList: true, subtree: true, characterData: true });
    },
    { text, ids },
  );
  await page.reload();
  const handle = await page.waitForFunction(() => (window as unknown as { firstSight?: Record<string, string | undefined> }).firstSight);
  return (await handle.jsonValue())!;
}
