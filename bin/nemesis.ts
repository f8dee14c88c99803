/**
 * The nemesis suite's full form: the seven fault phases of test/ha/nemesis.test.ts with longer
 * phases (and any rate), against the running topology.
 *
 *   scripts/services.sh start --topology ha      # found at HA_CASSANDRA_CONTACT_POINTS and
 *                                                # HA_REDIS_CLUSTER_NODES (default: its addresses)
 *   npm run nemesis -- --seconds 120             # phases of about 2 minutes of load each
 *   npm run nemesis -- --seconds 60 --rate 60 --phases 1,5
 *
 * Options (or environment): --seconds N (NEMESIS_PHASE_SECONDS, default 120): load per phase,
 * 20% before the fault, 40% held, 40% recovering; --rate R (NEMESIS_RATE, default 30): sends per
 * second over all senders; --phases 1,2,… (NEMESIS_PHASES): which phases. Without the HA
 * topology it runs on the single one (scripts/services.sh start), skipping the phases that need
 * it (NEMESIS_TOPOLOGY=single forces that). It must run as root for the partitions (nftables,
 * cgroup v2; without them phases 3 and 4 are skipped). Writes
 * artifacts/nemesis.json and artifacts/nemesis.md; exits 1 if any phase lost, duplicated or
 * reordered anything, missed a bound, or failed.
 */
import { parseArgs } from 'node:util';
import { VIOLATIONS } from '../test/helpers/nemesis/checker.ts';
import { findTopology } from '../test/helpers/nemesis/harness.ts';
import { markdown, violationsOf } from '../test/helpers/nemesis/report.ts';
import { runNemesis, timingFor } from '../test/helpers/nemesis/run.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string' },
    rate: { type: 'string' },
    phases: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write('npm run nemesis -- [--seconds N] [--rate R] [--phases 1,2,...]  (see bin/nemesis.ts)\n');
  process.exit(0);
}

const seconds = Number(values.seconds ?? process.env.NEMESIS_PHASE_SECONDS ?? 120);
const rate = Number(values.rate ?? process.env.NEMESIS_RATE ?? 30);
if (!(seconds >= 5) || !(rate > 0)) throw new Error('--seconds must be at least 5 and --rate above 0');
const only = (values.phases ?? process.env.NEMESIS_PHASES)?.split(',').map((s) => s.trim()).filter(Boolean);

const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const teardowns: (() => unknown)[] = [];
const t = { teardown: (fn: () => unknown) => void teardowns.push(fn), comment: log };

const topology = await findTopology(log);
if (!topology) {
  log('no topology to run on: scripts/services.sh start (or start --topology ha)');
  process.exit(1);
}
let failed = false;
try {
  const report = await runNemesis({
    topology,
    t,
    timing: timingFor(seconds, rate),
    ...(only ? { only } : {}),
    log,
    onPhase: (p) => {
      const bad = p.verdict ? violationsOf(p.verdict) : {};
      const missed = (p.bounds ?? []).filter((b) => !(b.value < b.limit));
      if (p.error || Object.keys(bad).length || missed.length) failed = true;
      log(`phase ${p.id}: ${p.skipped ? `skipped (${p.skipped})` : `${p.verdict?.acknowledged} acknowledged; violations ${JSON.stringify(bad)}; bounds missed ${missed.map((b) => b.name).join(', ') || 'none'}`}`);
    },
  });
  process.stdout.write(`${markdown(report)}\n`);
  log(`checked: ${VIOLATIONS.join(', ')}; report in artifacts/nemesis.json and artifacts/nemesis.md`);
} finally {
  for (const fn of teardowns.reverse()) await fn();
}
process.exit(failed ? 1 : 0);
