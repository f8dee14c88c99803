import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import t, { type Test } from 'tap';
import { chromiumMissing } from '../helpers/dashboard-page.ts';
import { ARTIFACTS, demoApp, newGroup, person } from '../helpers/demo-page.ts';
import { requireService } from '../helpers/index.ts';

// Files in the reference app, in headless Chromium: a person picks an image, sees its upload's
// progress, and both sides see its placeholder then its thumbnail; a PDF shows as a link with its
// name and size; a refused file says why. On the embedded store (the node serves the files) and on
// the S3-compatible server (the browser puts and gets them there, across origins: the bucket the
// node creates allows the app's origin). Screenshots in artifacts/.

type Store = { name: 'local' } | { name: 's3'; endpoint: string };

async function filesInTheApp(t: Test, store: Store) {
  const shot = (name: string) => `${ARTIFACTS}demo-files-${store.name === 's3' ? 's3-' : ''}${name}.png`;
  const s3: Record<string, string> = store.name === 's3' ? { ATTACHMENTS_STORE: 's3', S3_ENDPOINT: store.endpoint, S3_BUCKET: `chat-demo-${Date.now().toString(36)}`, S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID ?? 'chat-service-dev', S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY ?? 'chat-service-dev-secret' } : {};
  const { svc, browser } = await demoApp(t, s3);
  const { page: bob, errors: bobErrors } = await person(browser, svc.urls.demo!, 'bob');
  const { page: alice, errors: aliceErrors } = await person(browser, svc.urls.demo!, 'alice');
  // What the browser refused (a CORS preflight, a CSP rule), said when the thumbnails never come.
  const refused: string[] = [];
  alice.on('console', (m) => void (m.type() === 'error' && refused.push(m.text().slice(0, 300))));
  await newGroup(alice, 'Holiday', 'bob');
  await bob.click('.chat-row:has-text("Holiday")');
  await bob.waitForSelector('.conv-title:has-text("Holiday")');

  // A photo of a few megabytes (noise does not compress), so its upload takes long enough to be seen.
  const width = 1600;
  const height = 1000;
  const noise = Buffer.alloc(width * height * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
  const photo = await sharp(noise, { raw: { width, height, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer();
  // Record every progress value the page shows, from before the file is picked.
  await alice.evaluate(() => {
    const seen: number[] = [];
    (window as unknown as { progressSeen: number[] }).progressSeen = seen;
    new MutationObserver(() => {
      document.querySelectorAll<HTMLProgressElement>('.upload-progress').forEach((p) => seen.push(p.value / p.max));
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
  await alice.setInputFiles('.composer .file-input', { name: 'beach.png', mimeType: 'image/png', buffer: photo });
  const thumbs = (page: typeof alice) => page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLImageElement>('.msg .attachment.image img.thumb')).some((img) => img.complete && img.naturalWidth > 0), undefined, { timeout: 30_000 });
  await Promise.all([thumbs(alice), thumbs(bob)]).catch(async (error: unknown) => {
    for (const line of [...aliceErrors, ...refused]) t.comment(line);
    await alice.screenshot({ path: shot('failed-alice') });
    await bob.screenshot({ path: shot('failed-bob') });
    throw error;
  });
  const progress = await alice.evaluate(() => (window as unknown as { progressSeen: number[] }).progressSeen);
  t.ok(progress.length > 0, `the upload's progress bar was shown (${progress.length} updates, last ${progress.at(-1)?.toFixed(2)})`);
  t.ok(progress.every((v, i) => i === 0 || v >= progress[i - 1]!), `it never went back (${progress.map((v) => v.toFixed(2)).join(' ')})`);
  t.equal(progress.at(-1), 1, 'and rose to 1: every byte sent before the bar gave way to the message');
  const shownOnBob = await bob.$eval('.msg .attachment.image img.thumb', (img) => ({ w: (img as HTMLImageElement).naturalWidth, h: (img as HTMLImageElement).naturalHeight, frame: getComputedStyle(img.parentElement!).backgroundImage }));
  t.same([shownOnBob.w, shownOnBob.h], [320, 200], 'bob sees the thumbnail at its size');
  t.match(shownOnBob.frame, /^url\("data:image\/png/, 'over the ThumbHash placeholder');
  const full = await bob.getAttribute('.msg .attachment.image', 'href');
  if (store.name === 's3') t.ok(full?.startsWith(`${store.endpoint}/`), `the thumbnail links to the full image on the S3 service (${full})`);
  else t.match(full, /\/v1\/files\//, 'the thumbnail links to the full image');
  // Bob's page loaded its directory before alice signed up: her name is looked up when it is missing.
  await bob.waitForFunction(() => document.querySelector('.msg .sender')?.textContent === 'alice', undefined, { timeout: 10_000 });
  t.pass("bob sees the sender's name, alice, who signed up after his page loaded");
  await alice.screenshot({ path: shot('alice') });
  await bob.screenshot({ path: shot('bob') });

  const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n');
  await bob.setInputFiles('.composer .file-input', { name: 'itinerary.pdf', mimeType: 'application/pdf', buffer: pdf });
  const link = alice.locator('.msg .attachment.file', { hasText: 'itinerary.pdf' });
  await link.waitFor();
  t.match(await link.textContent(), /itinerary\.pdf\s+\d+ bytes/, 'a PDF shows as a link with its name and size');
  await alice.waitForFunction(() => !!document.querySelector('.msg .attachment.file')?.getAttribute('href'));
  const download = await fetch((await link.getAttribute('href'))!);
  t.same(Buffer.from(await download.arrayBuffer()), pdf, 'and the link serves it');
  // The page left open past the URLs' 5 minutes (its clock moved on): followed, the link asks
  // for fresh URLs first, and the download works.
  await alice.evaluate(() => {
    const real = Date.now.bind(Date);
    Date.now = () => real() + 5 * 60_000;
  });
  const asked = alice.waitForRequest((r) => r.method() === 'GET' && /\/api\/chats\/[^/]+\/attachments\//.test(r.url()), { timeout: 10_000 });
  const downloading = alice.waitForEvent('download', { timeout: 10_000 });
  await link.click();
  await asked;
  t.pass('a link followed past its URLs\' time asks for fresh ones');
  const downloaded = await downloading;
  t.same(await readFile((await downloaded.path())!), pdf, 'and downloads the file');

  await alice.setInputFiles('.composer .file-input', { name: 'funny.png', mimeType: 'image/png', buffer: Buffer.concat([Buffer.from('MZ'), Buffer.alloc(400)]) });
  const refusal = alice.locator('.msg.failed [role=alert]');
  await refusal.waitFor();
  t.match(await refusal.textContent(), /Not sent: files of type application\/x-msdownload are not accepted/, 'a refused file says why');
  await alice.screenshot({ path: shot('refused') });
  t.same([...aliceErrors, ...bobErrors], [], 'no page errors');
}

if (!chromiumMissing(t, 'reference app files test')) {
  const title = 'two people send files in the reference app: an image with progress and thumbnail, a PDF, a refused file';
  t.test(`${title} (embedded store)`, { timeout: 120_000 }, (t) => filesInTheApp(t, { name: 'local' }));
  const objectStore = await requireService('objectstore', (line) => t.comment(line));
  if (!objectStore) t.skip('S3-compatible server not running (scripts/services.sh start objectstore)', () => undefined);
  else t.test(`${title} (S3-compatible store)`, { timeout: 120_000 }, (t) => filesInTheApp(t, { name: 's3', endpoint: `http://${objectStore.host}:${objectStore.port}` }));
}
