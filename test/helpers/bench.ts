import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScenarioResult } from '../../bench/lib/output.ts';
import { nodeScript } from '../../bin/spawn.ts';

export interface BenchRun {
  code: number | null;
  stdout: string;
  stderr: string;
  dir: string;
  /** The scenario's JSON result. */
  result(scenario: string): ScenarioResult;
  file(name: string): string | undefined;
  cleanup(): void;
}

/**
 * Runs `npm run bench -- args` (the CLI directly) with results going to a fresh directory. The
 * timeout is a hang guard: a smoke run that takes a minute alone took two on a busy CI machine.
 */
export function bench(args: string[], timeoutMs = 240_000): Promise<BenchRun> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  return new Promise((resolve) => {
    execFile(process.execPath, [...nodeScript('bench/cli.ts'), ...args, '--out', dir, '--no-progress'], { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({
        code: error ? ((error as { code?: number }).code ?? null) : 0,
        stdout,
        stderr,
        dir,
        result: (scenario) => JSON.parse(readFileSync(join(dir, `${scenario}.json`), 'utf8')) as ScenarioResult,
        file: (name) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : undefined),
        cleanup: () => rmSync(dir, { recursive: true, force: true }),
      });
    });
  });
}
