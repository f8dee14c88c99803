import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VIOLATIONS, type Verdict } from './checker.ts';

/** One phase of a run: what was done, and what the checker found (or why it did not run). */
export interface PhaseResult {
  id: string;
  title: string;
  /** What the fault hit, in words (which node, which pid, which Redis master…). */
  target?: string;
  skipped?: string;
  /** Seconds from the start of the phase's load: the fault, the heal, the heal done, the load stopped. */
  timeline?: { faultAt: number; healAt: number; healedAt: number; loadStoppedAt: number };
  /** Bounds the phase asserts beyond the violations (e.g. the longest stall). */
  bounds?: { name: string; limit: number; value: number; detail?: string }[];
  notes: string[];
  verdict?: Verdict;
  /** A phase that threw: the error (the run goes on with the next phase). */
  error?: string;
}

export interface RunReport {
  startedAt: string;
  finishedAt: string;
  /** `ha` (three Cassandra nodes, Redis Cluster) or `single` (one of each). */
  topology: string;
  /** Which pieces of the HA work this run had, and which it did without. */
  capabilities: Record<string, boolean>;
  settings: Record<string, number | string>;
  phases: PhaseResult[];
}

const ARTIFACTS = new URL('../../../artifacts/', import.meta.url).pathname;

/** The violations of a phase that are not 0. */
export function violationsOf(verdict: Verdict): Record<string, number> {
  return Object.fromEntries(VIOLATIONS.map((k) => [k, verdict[k]]).filter(([, v]) => v !== 0));
}

const ms = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${x} ms`);

/** The per-phase table, as Markdown. */
export function markdown(report: RunReport): string {
  const lines: string[] = [];
  lines.push(`# Nemesis run (${report.topology} topology)`, '');
  lines.push(`${report.startedAt} to ${report.finishedAt}. Settings: ${Object.entries(report.settings).map(([k, v]) => `${k} ${v}`).join(', ')}.`);
  lines.push(`Pieces: ${Object.entries(report.capabilities).map(([k, v]) => `${k} ${v ? 'yes' : 'no'}`).join(', ')}.`, '');
  lines.push('| phase | sends attempted | acknowledged | refused | unknown outcomes (OUTCOME_UNKNOWN) | unresolved (stored) | longest stall, any chat / worst chat | recover (first ack after heal) | lost | duplicated | seqs reused | other violations |');
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const p of report.phases) {
    const v = p.verdict;
    if (!v) {
      lines.push(`| ${p.id} ${p.title} | ${p.skipped ? `skipped: ${p.skipped}` : `error: ${p.error ?? 'none'}`} |  |  |  |  |  |  |  |  |  |  |`);
      continue;
    }
    const others = Object.entries(violationsOf(v)).filter(([k]) => !['lost', 'duplicated', 'seqsReused'].includes(k));
    lines.push(
      `| ${p.id} ${p.title} | ${v.attempted} | ${v.acknowledged} | ${v.refused} | ${v.unknownOutcomes} (${v.outcomeUnknownAnswers}) | ${v.unresolved} (${v.unresolvedStored}) | ${ms(v.longestStallMs)} / ${ms(v.worstChatStallMs)} | ${ms(v.recoverMs)} | ${v.lost} | ${v.duplicated} | ${v.seqsReused} | ${others.length ? others.map(([k, n]) => `${k} ${n}`).join(', ') : '0'}${p.error ? `; error: ${p.error}` : ''} |`,
    );
  }
  lines.push('', '## Members', '');
  lines.push('| phase | sockets | resumed on another node | seqs live | replayed | paged | resume.gap frames | live gaps |');
  lines.push('|---|---|---|---|---|---|---|---|');
  for (const p of report.phases) {
    if (!p.verdict) continue;
    const sum = (k: 'sockets' | 'resumedElsewhere' | 'live' | 'replayed' | 'paged' | 'resumeGaps' | 'liveGaps') => p.verdict!.memberStats.reduce((n, m) => n + m[k], 0);
    lines.push(`| ${p.id} | ${sum('sockets')} | ${sum('resumedElsewhere')} | ${sum('live')} | ${sum('replayed')} | ${sum('paged')} | ${sum('resumeGaps')} | ${sum('liveGaps')} |`);
  }
  lines.push('', '## Phases', '');
  for (const p of report.phases) {
    lines.push(`### ${p.id} ${p.title}`, '');
    if (p.target) lines.push(`Target: ${p.target}.`);
    if (p.timeline) lines.push(`Fault at ${p.timeline.faultAt.toFixed(1)} s, heal at ${p.timeline.healAt.toFixed(1)} s (done at ${p.timeline.healedAt.toFixed(1)} s), load stopped at ${p.timeline.loadStoppedAt.toFixed(1)} s.`);
    for (const b of p.bounds ?? []) lines.push(`Bound: ${b.name} ${ms(b.value)} (limit ${ms(b.limit)}): ${b.value < b.limit ? 'met' : `NOT MET${b.detail ? `: ${b.detail}` : ''}`}.`);
    if (p.skipped) lines.push(`Skipped: ${p.skipped}.`);
    if (p.error) lines.push(`Error: ${p.error}`);
    for (const n of p.notes) lines.push(`- ${n}`);
    for (const [kind, list] of Object.entries(p.verdict?.examples ?? {})) {
      lines.push(`- ${kind}:`);
      for (const e of list) lines.push(`  - ${e}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** Writes what the clients recorded in a phase with violations (artifacts/<name>), for a closer look; returns its path. */
export function writeEvidence(name: string, records: unknown, dir = ARTIFACTS): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(records));
  return file;
}

/** Writes artifacts/nemesis.json and artifacts/nemesis.md; returns their paths. */
export function writeReport(report: RunReport, dir = ARTIFACTS): { json: string; md: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, 'nemesis.json');
  const md = join(dir, 'nemesis.md');
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(md, `${markdown(report)}\n`);
  return { json, md };
}
