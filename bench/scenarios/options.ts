/** What a scenario reads from the command line. */
export interface ScenarioOptions {
  num(name: string, fallback: number, integer?: boolean): number;
  list(name: string): string[] | undefined;
  smoke: boolean;
  /** fanout, cluster: the run at twice the highest rate after the sweep (`--no-overload` turns it off). */
  overload: boolean;
  seconds: number;
  warmup: number;
}

export interface ScenarioOutput {
  parameters: Record<string, unknown>;
  rows: import('../lib/output.ts').Row[];
  summary: Record<string, unknown>;
  notes: string[];
}
