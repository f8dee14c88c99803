import { writeDashboard } from './bundle.ts';

/** `npm run build:dashboard`: bundles the page (Preact, htm, uPlot, the views) into control/dashboard/dist/. */
const written = await writeDashboard().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
process.stdout.write(`dashboard: wrote ${written.join(', ')} to control/dashboard/dist/\n`);
