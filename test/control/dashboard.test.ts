import { mkdirSync } from 'node:fs';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import t from 'tap';
import WebSocket from 'ws';
import { chromiumMissing, dashboardPage, DESKTOP, focused, PHONE } from '../helpers/dashboard-page.ts';
import { removeDir, startService } from '../helpers/index.ts';

// The dashboard page (control/dashboard): how it is served, then a new user's whole flow in
// headless Chromium, done the way a person does it (labelled fields, buttons by name, the keyboard).

const ARTIFACTS = new URL('../../artifacts/', import.meta.url).pathname;
const PASSWORD = 'correct horse battery staple';

// Usage counters are flushed by the node every second, so the figures show up within seconds.
const svc = await startService({ USAGE_FLUSH_SECONDS: '1' });
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});
const base = svc.controlUrl;

t.test('the page and its bundle: strict CSP, nosniff, cache headers; not in the OpenAPI document; other paths keep their answers', async (t) => {
  const page = await fetch(`${base}/`);
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /^text\/html/);
  const csp = page.headers.get('content-security-policy') ?? '';
  t.match(csp, /script-src 'self'(;|$)/, 'scripts from the service only');
  t.notMatch(csp, /unsafe-inline|unsafe-eval/, 'no inline script or style, no eval');
  t.match(csp, /frame-ancestors 'none'/);
  t.equal(page.headers.get('x-content-type-options'), 'nosniff');
  t.equal(page.headers.get('cache-control'), 'no-cache', 'the page is revalidated, so a new bundle is picked up');
  const html = await page.text();
  t.notMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script');
  const assets = [...html.matchAll(/(?:src|href)="(\/dashboard\/[^"]+)"/g)].map((m) => m[1]!);
  t.equal(assets.length, 2, 'one script, one stylesheet');
  for (const path of assets) {
    const res = await fetch(`${base}${path}`);
    t.equal(res.status, 200, path);
    t.match(res.headers.get('content-type'), path.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
    t.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable', `${path}: the name carries its hash`);
    t.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const again = await fetch(`${base}${path}`, { headers: { 'if-none-match': res.headers.get('etag')! } });
    t.equal(again.status, 304, `${path}: revalidation answers 304`);
  }
  const head = await fetch(`${base}/`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.headers.get('content-length'), String(Buffer.byteLength(html)), 'HEAD: the length GET sends, no content');
  const post = await fetch(`${base}/`, { method: 'POST' });
  t.equal(post.status, 405);
  t.equal(post.headers.get('allow'), 'GET, HEAD, OPTIONS');
  const missing = await fetch(`${base}/dashboard/nothing.js`);
  t.equal(missing.status, 404);
  t.equal(((await missing.json()) as { code: string }).code, 'ROUTE_NOT_FOUND');
  const unknown = await fetch(`${base}/api/nothing-here`);
  t.equal(((await unknown.json()) as { code: string }).code, 'ROUTE_NOT_FOUND', 'the API still answers 404 for unknown paths');
  const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
  t.notOk(Object.keys(doc.paths).some((p) => p === '/' || p.startsWith('/dashboard')), 'the page is not an API operation');
});

t.test("the page's session: expired calls share one refresh and are retried; a reload restores it; a refused refresh signs out", async (t) => {
  // The page's session code against a stand-in for the API: access tokens cannot be made to expire
  // on the real service within a test (they last 15 minutes).
  const jwt = (n: number) => `h.${Buffer.from(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + 900, n })).toString('base64url')}.s`;
  const valid = new Set<string>();
  const refreshedWith: string[] = [];
  let refuse = false;
  const answer = (status: number, body?: unknown) => new Response(body === undefined ? null : JSON.stringify(body), { status });
  const problem = (code: string) => answer(401, { type: 'about:blank', title: code, status: 401, detail: code.toLowerCase(), code });
  const realFetch = globalThis.fetch;
  t.teardown(() => void (globalThis.fetch = realFetch));
  globalThis.fetch = (async (path: string, init: RequestInit) => {
    const bearer = ((init.headers as Record<string, string>).authorization ?? '').replace('Bearer ', '');
    const issue = () => {
      const token = jwt(valid.size + refreshedWith.length);
      valid.add(token);
      return token;
    };
    if (path === '/api/auth/login') return answer(200, { mfaRequired: false, accessToken: issue(), refreshToken: 'rt_0', email: 'dev@acme.example', role: 'CLIENT' });
    if (path === '/api/auth/refresh') {
      refreshedWith.push(bearer);
      return refuse ? problem('REFRESH_TOKEN_REUSED') : answer(200, { accessToken: issue(), refreshToken: `rt_${refreshedWith.length}`, expiresIn: 900 });
    }
    if (path === '/api/auth/logout') return answer(204);
    return valid.has(bearer) ? answer(200, { companyName: 'Acme' }) : problem('TOKEN_EXPIRED');
  }) as typeof fetch;
  const { DashboardApi } = await import('../../control/dashboard/page/api.ts');
  const kept = new Map<string, string>();
  const storage = { getItem: (k: string) => kept.get(k) ?? null, setItem: (k: string, v: string) => void kept.set(k, v), removeItem: (k: string) => void kept.delete(k) } as Storage;

  const api = new DashboardApi(storage);
  const reasons: (string | undefined)[] = [];
  api.onChange((reason) => reasons.push(reason));
  await api.login({ email: 'dev@acme.example', password: PASSWORD });
  const first = [...valid][0]!;
  valid.clear();
  const answers = await Promise.all([1, 2, 3].map(() => api.call<{ companyName: string }>('GET', '/api/client/profile')));
  t.same(answers.map((a) => a.companyName), ['Acme', 'Acme', 'Acme'], 'each expired call is retried with the new token');
  t.same(refreshedWith, [first], 'one refresh for the three, sent with the last access token');
  t.match([...kept.values()].join(), /rt_1/, 'the rotated refresh token is what is kept');

  const reloaded = new DashboardApi(storage);
  t.equal(reloaded.email, 'dev@acme.example', 'a reload restores the session from sessionStorage');
  valid.clear();
  refuse = true;
  reloaded.onChange((reason) => reasons.push(reason));
  await t.rejects(reloaded.call('GET', '/api/client/profile'), { code: 'REFRESH_TOKEN_REUSED' }, 'the call fails with the reason the refresh was refused');
  t.equal(reloaded.email, undefined, 'a refused refresh ends the session');
  t.equal(kept.size, 0, 'and forgets the tokens');
  t.same(reasons, [undefined, 'expired'], 'the page is told: signed in, then the session expired');
  await api.logout();
});

/** A screenshot at desktop and at phone width, into artifacts/: the whole page, or (a modal dialog) the screen. */
async function shoot(page: Page, name: string, fullPage = true) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: `${ARTIFACTS}dashboard-${name}-desktop.png`, fullPage });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: `${ARTIFACTS}dashboard-${name}-phone.png`, fullPage });
  await page.setViewportSize(DESKTOP);
}

/** The accessible names Tab reaches from the top of the page, in order. */
async function tabStops(page: Page, max: number): Promise<string[]> {
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.locator('body').focus();
  const names: string[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    names.push(await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return (el?.getAttribute('aria-label') ?? el?.textContent ?? '').trim();
    }));
  }
  return names;
}

/** The short id the page names the key just created by (from its token field's label). */
const newKeyName = async (page: Page) => (await page.locator('label[for="new-key-token"]').textContent())?.match(/[0-9a-f]{8}$/)?.[0];

/** A TOTP code of the secret, as an authenticator app `stepsAhead` 30 s steps ahead would show it. */
const totp = (secret: string, stepsAhead = 0) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: Date.now() + stepsAhead * 30_000 });

/** Calls the cluster the way an integrator's backend and browser do. */
async function cluster<T>(path: string, token: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${svc.nodeUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

if (!chromiumMissing(t, 'dashboard browser test'))
t.test('a new user signs up, creates an application and keys, turns MFA on, logs in with a code, sees usage, revokes, rotates, renames and deletes', async (t) => {
  const { page, problems } = await dashboardPage(t, base);

  // Sign up. An address the browser takes but the service refuses is reported beside its field.
  await page.goto(`${base}/#/signup`);
  await page.getByLabel('Company name').fill('Acme');
  await page.getByLabel('E-mail').fill('dev@localhost');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  const email = page.getByLabel('E-mail');
  await t.resolves(email.and(page.locator('[aria-invalid="true"]')).waitFor(), 'the refused field is marked invalid');
  t.match(await page.locator('.field', { has: email }).locator('.field-error').textContent(), /e-mail address such as/, 'its message is under it');
  await shoot(page, 'signup');
  const address = `dev-${Date.now()}@acme.example`;
  await email.fill(address);
  await email.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();

  // Create an application: the form leads to its page.
  await page.getByLabel('Application name').fill('Acme chat');
  await page.getByRole('button', { name: 'Create application' }).click();
  await page.getByRole('heading', { level: 1, name: 'Acme chat' }).waitFor();
  t.equal(await page.locator('#cluster-endpoint').textContent(), svc.nodeUrl, 'the endpoint shown is the cluster node');

  // Create a key: its token is on the page once, and the copy button puts it on the clipboard.
  await page.getByRole('button', { name: 'Create API key' }).click();
  const tokenField = page.getByLabel(/^API key [0-9a-f]{8}$/);
  const token = await tokenField.inputValue();
  const firstKey = (await newKeyName(page))!;
  t.match(token, /^ey[\w-]+\.[\w-]+\.[\w-]+$/, 'the token is a JWT');
  t.match(await page.locator('.new-key').textContent(), /shown only this once/, 'with a warning');
  await page.getByRole('button', { name: 'Copy API key' }).click();
  await page.locator('.new-key .copy-said', { hasText: 'Copied' }).waitFor();
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), token, 'copied to the clipboard');
  await page.getByRole('button', { name: 'Copy cluster endpoint' }).click();
  await page.locator('.endpoint .copy-said', { hasText: 'Copied' }).waitFor();
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), svc.nodeUrl, 'the endpoint copies too');
  const quick = await page.locator('#quick-panel pre').textContent();
  t.match(quick, `export CHAT_ENDPOINT='${svc.nodeUrl}'`, 'the quick start is filled in with this endpoint');
  t.notMatch(quick, token, 'and never holds the key');
  await page.getByRole('tab', { name: 'Node.js SDK' }).click();
  await t.resolves(page.locator('#quick-panel pre', { hasText: `baseUrl: "${svc.nodeUrl}"` }).waitFor(), 'so is the SDK example');
  await shoot(page, 'new-key');
  await page.getByRole('button', { name: 'I have stored it' }).click();
  await t.resolves(tokenField.waitFor({ state: 'detached' }), 'the token is gone once dismissed');
  t.notMatch(await page.content(), token, 'and is nowhere in the page');

  // Turn MFA on: read the secret, compute the code, keep the recovery codes.
  await page.getByRole('link', { name: 'Profile' }).click();
  await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
  await t.resolves(page.getByRole('img', { name: /QR code/ }).waitFor(), 'the QR code is shown');
  const secret = (await page.locator('dt:text-is("Secret key") + dd code').textContent())!.replace(/\s/g, '');
  await shoot(page, 'mfa-enrol');
  await page.getByLabel('Code from your app').fill(totp(secret));
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.getByRole('list', { name: 'Recovery codes' }).waitFor();
  const codes = await page.locator('ul.codes code').allTextContents();
  t.equal(codes.length, 10, 'ten recovery codes, shown once');
  await page.getByRole('button', { name: 'I have saved them' }).click();
  await page.getByText(/10 of 10 recovery codes left/).waitFor();

  // Log out, then in: a wrong password is reported by the form, then the code step.
  await page.getByRole('button', { name: 'Log out' }).click();
  await page.getByRole('heading', { level: 1, name: 'Log in' }).waitFor();
  t.equal(await page.evaluate(() => sessionStorage.length), 0, 'logging out forgets the session');
  await page.getByLabel('E-mail').fill(address);
  await page.getByLabel('Password').fill('not the password');
  await page.getByLabel('Password').press('Enter');
  const formError = page.locator('form').getByRole('alert');
  await formError.filter({ hasText: /password is wrong/i }).waitFor();
  await shoot(page, 'login-error');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByLabel('Password').press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Two-factor sign-in' }).waitFor();
  await page.getByLabel('Code').fill(totp(secret, -5));
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.locator('.field-error', { hasText: /code is wrong/ }).waitFor();
  t.equal(await page.getByLabel('Code').getAttribute('aria-invalid'), 'true', 'a wrong code is reported at the field');
  await shoot(page, 'login-mfa');
  // A code is accepted once, and only for a later time step than the last one accepted, so the
  // current step's code may be the one that turned MFA on. Rather than wait up to 30 s for the next
  // step, the test uses the next step's code: the service accepts one step either way for clock drift.
  await page.getByLabel('Code').fill(totp(secret, 1));
  await page.getByLabel('Code').press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();
  await page.getByRole('link', { name: 'Acme chat' }).waitFor();
  await shoot(page, 'apps');

  // The integrator's backend uses the key: 2 users, 1 chat, 3 messages.
  const alice = await cluster<{ userId: string }>('/api/users', token, { username: 'alice' });
  const bob = await cluster<{ userId: string }>('/api/users', token, { username: 'bob' });
  t.same([alice.status, bob.status], [201, 201]);
  const { jwt } = (await cluster<{ jwt: string }>('/api/users/signin', token, { userId: alice.body.userId })).body;
  const chat = await cluster<{ chatId: string }>('/api/chats', jwt, { type: 'direct', userId: bob.body.userId });
  // Alice stays connected over WebSocket, so the concurrent-user figures have someone to count.
  const socket = new WebSocket(`${svc.nodeUrl.replace(/^http/, 'ws')}/ws?token=${jwt}`);
  t.teardown(() => socket.close());
  await new Promise<void>((resolve, reject) => {
    socket.on('message', (data) => (JSON.parse(String(data)) as { type: string }).type === 'ready' && resolve());
    socket.once('error', reject);
  });
  for (let i = 1; i <= 3; i++) t.equal((await cluster(`/api/messages/${chat.body.chatId}`, jwt, { content: `hello ${i}` })).status, 201);

  // The usage panel shows what was done, once the node has flushed it (each second here).
  await page.getByRole('link', { name: 'Acme chat' }).click();
  const stat = (label: string) => page.locator('.stat', { hasText: label }).locator('dd');
  const deadline = Date.now() + 20_000;
  const shown = async () => Promise.all(['Registered users', 'Chats', 'Messages sent', 'Peak connected'].map((label) => stat(label).textContent()));
  while ((await shown()).join() !== '2,1,3,1' && Date.now() < deadline) {
    await page.getByRole('button', { name: 'Refresh usage' }).click();
    await page.locator('[aria-labelledby="usage-title"][aria-busy="false"]').waitFor();
  }
  t.same(await shown(), ['2', '1', '3', '1'], 'registered users, chats, messages sent and peak connected users match');
  t.equal(await page.getByRole('img', { name: /Last 30 days: 3 messages/ }).count(), 1, 'the chart says what it shows');
  // A reload keeps the session (sessionStorage) and lists the key's last use.
  await page.reload();
  const firstRow = page.locator('table.keys tbody tr').first();
  t.notMatch(await firstRow.locator('td[data-label="Last used"]').textContent(), /Never/, 'the key was last used just now');
  await shoot(page, 'app');

  // Keyboard: the main controls are reached with Tab, in order, from the top.
  const stops = await tabStops(page, 40);
  for (const name of ['Skip to content', 'Applications', 'Profile', 'Log out', 'Copy cluster endpoint', 'Create API key', `Rotate key ${firstKey}`, `Revoke key ${firstKey}`, 'Refresh usage', 'curl', 'Copy curl commands']) {
    t.ok(stops.includes(name), `Tab reaches "${name}"`);
  }

  // A second key, revoked with the keyboard: Escape cancels the confirmation, Enter confirms it.
  await page.getByRole('button', { name: 'Create API key' }).click();
  const second = await tokenField.inputValue();
  const secondKey = (await newKeyName(page))!;
  await page.getByRole('button', { name: 'I have stored it' }).click();
  const revoke = page.getByRole('button', { name: `Revoke key ${secondKey}` });
  await revoke.focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: `Revoke key ${secondKey}?` });
  await dialog.waitFor();
  await shoot(page, 'confirm', false);
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  t.ok(await focused(revoke), 'focus returns to the button');
  await page.keyboard.press('Enter');
  await dialog.getByRole('button', { name: 'Revoke key' }).press('Enter');
  await dialog.waitFor({ state: 'detached' });
  await page.locator('table.keys tbody tr', { hasText: secondKey }).getByText('REVOKED').waitFor();
  t.equal((await cluster('/api/server/whoami', second)).status, 401, 'the cluster refuses the revoked key');

  // Rotate the first key: the replacement is shown once, the old key stops working.
  await page.getByRole('button', { name: `Rotate key ${firstKey}` }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Rotate key' }).click();
  const rotated = await tokenField.inputValue();
  t.not(rotated, token);
  t.equal((await cluster('/api/server/whoami', rotated)).status, 200, 'the new key works');
  t.equal((await cluster('/api/server/whoami', token)).status, 401, 'the old one does not');
  await page.getByRole('button', { name: 'I have stored it' }).click();

  // Rename the application.
  await page.getByLabel('Application name').fill('Acme support');
  await page.getByRole('button', { name: 'Rename' }).click();
  await page.getByRole('heading', { level: 1, name: 'Acme support' }).waitFor();
  await page.getByRole('status').filter({ hasText: 'Renamed.' }).waitFor();

  // Change the company name; turn MFA off with the password and a recovery code.
  await page.getByRole('link', { name: 'Profile' }).click();
  await page.getByLabel('Company name').fill('Acme Inc');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  await page.getByLabel('Current password').fill(PASSWORD);
  await page.getByLabel('Code from your app, or a recovery code').fill(codes[0]!);
  await page.getByRole('button', { name: 'Turn off' }).click();
  await page.getByRole('button', { name: 'Set up two-factor sign-in' }).waitFor();
  await shoot(page, 'profile');

  // Delete the application, after confirming.
  await page.getByRole('link', { name: 'Applications' }).click();
  await page.getByRole('link', { name: 'Acme support' }).click();
  await page.getByRole('button', { name: 'Delete application' }).click();
  await page.getByRole('dialog', { name: 'Delete Acme support?' }).getByRole('button', { name: 'Delete application' }).click();
  await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor();
  await page.getByText('No application yet').waitFor();
  t.equal((await cluster('/api/server/whoami', rotated)).status, 401, "the deleted application's key is refused");
  t.same(problems, [], 'no script error and no CSP violation');
});
