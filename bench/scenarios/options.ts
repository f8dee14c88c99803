/** What a scenario reads from the command line. */
export interface ScenarioOptions {
  num(name: string, fallback: number, integer?: boolean): number;
  list(name: string): string[] | undefined;
  smoke: boolean;
  seconds: number;
  warmup: number;
}

export interface ScenarioOutput {
  parameters: Record<string, unknown>;
  rows: import('../lib/output.ts').Row[];
  summary: Record<string, unknown>;
  notes: string[];
}
