import cliProgress from 'cli-progress';

/**
 * A progress bar on stderr (results go to files and stdout). Without a terminal it prints a line
 * every few seconds instead, so CI logs show where a run is.
 */
export class Progress {
  private readonly bar: cliProgress.SingleBar;
  private total = 0;
  private value = 0;

  constructor(private readonly enabled: boolean) {
    this.bar = new cliProgress.SingleBar(
      { format: '{bar} {percentage}% | {value}/{total} | {stage}', stream: process.stderr, noTTYOutput: true, notTTYSchedule: 5000, hideCursor: true, etaBuffer: 20 },
      cliProgress.Presets.shades_classic,
    );
  }

  /** Starts (or extends) the bar with `steps` more steps. */
  plan(steps: number, stage: string): void {
    if (!this.enabled) return;
    if (this.total === 0) this.bar.start(steps, 0, { stage });
    else this.bar.setTotal(this.total + steps);
    this.total += steps;
    this.bar.update({ stage });
  }

  stage(stage: string): void {
    if (this.enabled) this.bar.update({ stage });
  }

  step(n = 1): void {
    if (!this.enabled) return;
    this.value = Math.min(this.total, this.value + n);
    this.bar.update(this.value);
  }

  stop(): void {
    if (this.enabled && this.total > 0) this.bar.stop();
  }
}
