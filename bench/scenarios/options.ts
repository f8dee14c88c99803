/** What a scenario reads from the command line. */
export interface ScenarioOptions {
  num(name: string, fallback: number, integer?: boolean): number;
  list(name: string): string[] | undefined;
  smoke: boolean;
  /** fanout, cluster: the run at twice the highest rate after the sweep (`--no-overload` turns it off). */
  overload: boolean;
  seconds: number;
  warmup: number;
  /**
   * cluster: the backends (`--topology`): `single` (one Cassandra, one Redis: the default) or `ha`
   * (the replicated ring and the Redis Cluster, measured beside the single topology in one run).
   */
  topology?: 'single' | 'ha';
}

export interface ScenarioOutput {
  /** The name its result files and report section go under, when not the scenario's own (`cluster-ha`). */
  scenario?: string;
  parameters: Record<string, unknown>;
  rows: import('../lib/output.ts').Row[];
  summary: Record<string, unknown>;
  notes: string[];
}
