import { execFile } from 'node:child_process';
import { nodeScript } from '../../bin/spawn.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

export interface CtlRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the operator command line (`npm run ctl -- args`, control/cli.ts) as the operator does, on
 * the store under `dataDir` (a started service's); resolves with its exit status, never throws on one.
 */
export function ctl(dataDir: string, ...args: string[]): Promise<CtlRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...nodeScript('control/cli.ts'), ...args], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

/** The objects of a JSON-lines output. */
export const jsonLines = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
