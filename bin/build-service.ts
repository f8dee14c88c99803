import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { BUILD_DIR, BUILT_SCRIPTS, ROOT } from './spawn.ts';

/**
 * `npm run build:service [-- --quiet]`: the service, the processes the tests start many times
 * (BUILT_SCRIPTS in bin/spawn.ts: the operator CLIs, the reference app's server, the benchmark's
 * CLI, load workers and peers) and the webhook delivery thread, compiled to plain JavaScript under
 * build/. It starts in about a third of the CPU time of the TypeScript through tsx's loader, and
 * runs without tsx's helpers (esbuild's `keepNames`, which names every closure as it is made): a
 * few percent less CPU per send (README, "Benchmarks"). `npm start` and `npm run bench` build
 * it and run it; `npm test` builds it and its suites start them from it (bin/spawn.ts `nodeScript`).
 *
 * Code that finds files next to its own source (`new URL('./page/', import.meta.url)`) keeps
 * finding them: each module's `import.meta.url` is replaced by its source file's URL, so the
 * bundle behaves as the sources do from wherever it is. Packages stay external (node_modules).
 */
const sourceLocation: Plugin = {
  name: 'source-location',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes(`${ROOT}node_modules/`)) return undefined;
      const source = await readFile(args.path, 'utf8');
      const url = JSON.stringify(pathToFileURL(args.path).href);
      return { contents: source.replaceAll('import.meta.url', url), loader: 'ts' };
    });
  },
};

const started = Date.now();
const built = await build({
  entryPoints: [...BUILT_SCRIPTS, 'node/webhooks/delivery-worker.ts', 'node/push/web-push-worker.ts'].map((script) => join(ROOT, script)),
  outbase: ROOT,
  outdir: BUILD_DIR,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
  plugins: [sourceLocation],
  define: {
    BUILT_DELIVERY_WORKER: JSON.stringify(pathToFileURL(join(BUILD_DIR, 'node/webhooks/delivery-worker.mjs')).href),
    BUILT_WEB_PUSH_WORKER: JSON.stringify(pathToFileURL(join(BUILD_DIR, 'node/push/web-push-worker.mjs')).href),
  },
  write: false,
}).catch(() => process.exit(1));
// Each file is written whole under another name and renamed into place, so a service starting
// while another `npm start` builds (the README's cluster starts four at once) reads either the old
// file or the new one, never half of one. Chunk names are hashes of their contents.
await Promise.all(
  built.outputFiles.map(async (file) => {
    await mkdir(dirname(file.path), { recursive: true });
    const partial = `${file.path}.${process.pid}.partial`;
    await writeFile(partial, file.contents);
    await rename(partial, file.path);
  }),
);
if (!process.argv.includes('--quiet')) process.stdout.write(`service: built ${BUILT_SCRIPTS.join(', ')} into build/ in ${Date.now() - started} ms\n`);
