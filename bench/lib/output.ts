import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunMeta } from './meta.ts';

/** One measured line of a table: which system, at what setting, and its figures. */
export type Row = Record<string, string | number | boolean | null>;

/** A scenario's result as written to JSON: the run, its parameters, its rows and its findings. */
export interface ScenarioResult {
  scenario: string;
  meta: RunMeta;
  /** The exact command that produced it. */
  command: string;
  parameters: Record<string, unknown>;
  rows: Row[];
  /** Headline figures per system, and the goals they are held against. */
  summary: Record<string, unknown>;
  notes: string[];
}

const cell = (v: unknown) => {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

/** CSV of the rows, each prefixed with the date, commit, scenario and parameters of the run. */
export function toCsv(result: ScenarioResult): string {
  const params = Object.entries(result.parameters).map(([k, v]) => [k, Array.isArray(v) ? v.join(' ') : v] as const);
  const columns = [...new Set(result.rows.flatMap((r) => Object.keys(r)))];
  const head = ['date', 'commit', 'scenario', ...params.map(([k]) => k), ...columns];
  const lines = result.rows.map((r) => [result.meta.date, result.meta.commit, result.scenario, ...params.map(([, v]) => v), ...columns.map((c) => r[c])].map(cell).join(','));
  return `${head.join(',')}\n${lines.join('\n')}\n`;
}

/** Writes `<scenario>.json` and `<scenario>.csv` into `dir`; returns their paths. */
export function writeResult(dir: string, result: ScenarioResult): string[] {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, `${result.scenario}.json`);
  const csv = join(dir, `${result.scenario}.csv`);
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(csv, toCsv(result));
  return [json, csv];
}
