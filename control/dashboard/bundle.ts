import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build, type BuildFailure } from 'esbuild';

/** One file the dashboard serves, ready to write: its bytes never change while the process runs. */
export interface Asset {
  body: Buffer;
  contentType: string;
  /** A strong validator of the body, for If-None-Match. */
  etag: string;
  /**
   * Whether the URL names the content (a hash in the file name), so a browser may keep it for a year
   * without asking again; the page itself is always revalidated, so a new build is picked up at once.
   */
  immutable: boolean;
}

export interface DashboardFiles {
  /** The HTML page served at `/`. */
  page: Asset;
  /** The script and stylesheet, by URL path (`/dashboard/app-<hash>.js`). */
  assets: ReadonlyMap<string, Asset>;
}

const PAGE_DIR = new URL('./page/', import.meta.url);
/** Where `npm run build:dashboard` writes the bundle (and `npm install`, `npm test` run it). */
export const DIST_DIR = new URL('./dist/', import.meta.url);
const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

const digest = (body: Buffer) => createHash('sha256').update(body).digest('base64url');

/**
 * Bundles the page's sources (Preact, htm, uPlot and the views) with esbuild, in memory, and fills
 * the HTML template with the hashed asset names. Takes about 50 ms; the caller keeps the result.
 * A source error rejects with every esbuild message, file and line included.
 */
export async function buildDashboard(): Promise<DashboardFiles> {
  let outputs;
  try {
    const result = await build({
      entryPoints: { app: fileURLToPath(new URL('main.ts', PAGE_DIR)) },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      minify: true,
      write: false,
      outdir: 'dashboard',
      logLevel: 'silent',
    });
    outputs = result.outputFiles;
  } catch (error) {
    const messages = (error as Partial<BuildFailure>).errors ?? [];
    const where = messages.map((m) => `${m.location ? `${m.location.file}:${m.location.line}: ` : ''}${m.text}`).join('; ');
    throw new Error(`the dashboard page did not bundle: ${where || (error as Error).message}`, { cause: error });
  }
  const assets = new Map<string, Asset>();
  const names: Record<string, string> = {};
  for (const file of outputs) {
    const ext = file.path.slice(file.path.lastIndexOf('.') + 1);
    const contentType = TYPES[ext];
    if (!contentType) continue;
    const body = Buffer.from(file.contents);
    const hash = digest(body);
    const path = `/dashboard/app-${hash.slice(0, 12)}.${ext}`;
    names[ext] = path;
    assets.set(path, { body, contentType, etag: `"${hash}"`, immutable: true });
  }
  if (!names.js || !names.css) throw new Error('the dashboard page did not bundle: esbuild produced no script or no stylesheet');
  const template = await readFile(new URL('index.html', PAGE_DIR), 'utf8');
  const html = Buffer.from(template.replace('{{script}}', names.js).replace('{{stylesheet}}', names.css));
  return { page: pageAsset(html), assets };
}

const pageAsset = (html: Buffer): Asset => ({ body: html, contentType: 'text/html; charset=utf-8', etag: `"${digest(html)}"`, immutable: false });

/** Builds the page and writes it to `dir` (emptied first): index.html and the hashed script and stylesheet. */
export async function writeDashboard(dir: URL = DIST_DIR): Promise<string[]> {
  const built = await buildDashboard();
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeFile(new URL('index.html', dir), built.page.body);
  for (const [path, asset] of built.assets) await writeFile(new URL(path.slice('/dashboard/'.length), dir), asset.body);
  return ['index.html', ...[...built.assets.keys()].map((p) => p.slice('/dashboard/'.length))];
}

/**
 * Reads the bundle `writeDashboard` wrote. Rejects, saying which command makes it, when it is
 * missing: the service never bundles sources itself.
 */
export async function loadDashboard(dir: URL = DIST_DIR): Promise<DashboardFiles> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    throw new Error(`the dashboard page is not built (no ${fileURLToPath(dir)}): run npm run build:dashboard`);
  }
  if (!names.includes('index.html')) throw new Error('the dashboard page is not built (no index.html): run npm run build:dashboard');
  const assets = new Map<string, Asset>();
  for (const name of names) {
    const contentType = TYPES[name.slice(name.lastIndexOf('.') + 1)];
    if (!contentType) continue;
    const body = await readFile(new URL(name, dir));
    assets.set(`/dashboard/${name}`, { body, contentType, etag: `"${digest(body)}"`, immutable: true });
  }
  return { page: pageAsset(await readFile(new URL('index.html', dir))), assets };
}
