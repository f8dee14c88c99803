import { addListener } from 'process-on-spawn';

/**
 * Loaded into every test process after tap's own hooks (package.json, tap's node-arg). tap's
 * process-info hook adds itself to the NODE_OPTIONS of every process a test starts (each service,
 * cluster node, CLI run and benchmark worker: some hundreds in `npm test`), where it is a module
 * loader thread of its own: 2.4 s more CPU for a compiled `bin/keys.ts --help` (1.7 s without),
 * 1.4 s more for the service through tsx. It serves coverage, which this project does not collect
 * (`disable-coverage`), so it is taken out again here; every other option stays.
 */
addListener((spawned) => {
  const options = (spawned.env.NODE_OPTIONS ?? '').match(/"[^"]*"|\S+/g) ?? [];
  const kept = options.filter((option) => !option.includes('@tapjs/processinfo'));
  if (kept.length) spawned.env.NODE_OPTIONS = kept.join(' ');
  else delete spawned.env.NODE_OPTIONS;
});
